// The dashboard's session and the answers around it (issue 30): a CSRF token made from a planted
// pre-sign-in cookie is refused once a session exists; answers carrying secrets are never cached;
// pages are never sniffed nor framed; and the session cookie downloads the user's own job outputs,
// as the Jobs page links them, but no one else's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../helpers/browser.ts';
import { errorBody, pollJob, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { audioBytes, speechConfig, startFakeSpeech, type FakeSpeech } from '../speech/fake-speech.ts';

let fake: FakeSpeech;
let gw: TestGateway;

beforeAll(async () => {
  fake = await startFakeSpeech();
  gw = await startTestGateway({ config: `${speechConfig(fake.url)}auth: { local: { allow_signup: true } }\n`, env: { JOB_POLL_MS: '25' } });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

const cookieHeader = (cookies: Map<string, string>) => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');

describe('CSRF tokens', () => {
  it('a token derived from a planted mg_pre cookie is refused beside a session; the session’s own token works', async () => {
    // The attacker's own visit: a pre-sign-in cookie and the token forms carry with it.
    const attacker = new Browser(gw.url);
    const page = await (await attacker.get('/signin')).text();
    const planted = attacker.cookies.get('mg_pre')!;
    const attackerToken = Browser.fields(page).csrf!;
    expect(planted).toMatch(/^[A-Za-z0-9]{32}$/);

    const victim = new Browser(gw.url);
    await victim.signUp('victim@example.com');
    const session = victim.cookies.get('mg_session')!;
    // Signing in ended the pre-sign-in cookie of the victim's own forms.
    expect(victim.cookies.has('mg_pre')).toBe(false);
    // The attacker's cookie planted beside the session (a sibling subdomain can set one).
    const both = `mg_session=${session}; mg_pre=${planted}`;

    const api = await fetch(`${gw.url}/v1/keys`, { method: 'POST', headers: { cookie: both, 'x-csrf-token': attackerToken, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'evil' }) });
    expect(api.status).toBe(403);
    expect(await errorBody(api)).toEqual({
      message: 'Missing or wrong X-CSRF-Token header: send the csrf_token of GET /v1/session with requests made with the session cookie.',
      type: 'permission_error',
      code: 'csrf_token_invalid',
      param: null,
    });
    const form = await fetch(`${gw.url}/signout`, { method: 'POST', headers: { cookie: both, 'content-type': 'application/x-www-form-urlencoded' }, body: `csrf=${attackerToken}`, redirect: 'manual' });
    expect(form.status).toBe(403);
    expect(await form.text()).toContain('This form expired');
    // Still signed in: nothing was changed.
    expect((await fetch(`${gw.url}/v1/session`, { headers: { cookie: both } })).status).toBe(200);
    expect(((await (await fetch(`${gw.url}/v1/keys`, { headers: { cookie: both } })).json()) as { data: unknown[] }).data).toEqual([]);

    // The session's own token, from GET /v1/session, is the one that works.
    const token = ((await (await fetch(`${gw.url}/v1/session`, { headers: { cookie: both } })).json()) as { csrf_token: string }).csrf_token;
    expect(token).not.toBe(attackerToken);
    const ok = await fetch(`${gw.url}/v1/keys`, { method: 'POST', headers: { cookie: both, 'x-csrf-token': token, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'mine' }) });
    expect(ok.status).toBe(201);
  });

  it('before sign-in the pre-sign-in cookie’s token still carries the sign-in form', async () => {
    const user = new Browser(gw.url);
    await user.signUp('pre@example.com');
    const fresh = new Browser(gw.url);
    const res = await fresh.signIn('pre@example.com', 'correct horse battery');
    expect(res.status).toBe(303);
    expect(fresh.cookies.has('mg_session')).toBe(true);
  });
});

describe('answers carrying secrets are never cached', () => {
  it('GET /v1/session, POST /v1/keys, app creation and secret rotation, admin key creation: Cache-Control: no-store', async () => {
    const user = new Browser(gw.url);
    await user.signUp('nostore@example.com');
    const session = await user.get('/v1/session');
    expect(session.status).toBe(200);
    expect(session.headers.get('cache-control')).toBe('no-store');

    const created = await user.api('POST', '/v1/keys', { name: 'ci' });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const key = ((await created.json()) as { key: string }).key;

    const app = await gw.fetch('/v1/apps', { method: 'POST', key, json: { name: 'A', redirect_uris: ['https://a.example/cb'] } });
    expect(app.status).toBe(201);
    expect(app.headers.get('cache-control')).toBe('no-store');
    const { id } = (await app.json()) as { id: string };
    const rotated = await gw.fetch(`/v1/apps/${id}/rotate-secret`, { method: 'POST', key });
    expect(rotated.status).toBe(200);
    expect(rotated.headers.get('cache-control')).toBe('no-store');

    const admin = await gw.fetch('/admin/v1/keys', { method: 'POST', key: gw.services.adminTokens.known!, json: { user: 'nostore@example.com' } });
    expect(admin.status).toBe(201);
    expect(admin.headers.get('cache-control')).toBe('no-store');

    // Answers without a secret keep their caching (none said): the key list shows prefixes only.
    expect((await user.get('/v1/keys')).headers.get('cache-control')).toBeNull();
  });
});

describe('pages', () => {
  it('HTML pages and /docs are never sniffed; /docs cannot be framed', async () => {
    const signin = await fetch(`${gw.url}/signin`);
    expect(signin.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(signin.headers.get('x-content-type-options')).toBe('nosniff');
    expect(signin.headers.get('x-frame-options')).toBe('DENY');
    const docs = await fetch(`${gw.url}/docs`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(docs.headers.get('x-content-type-options')).toBe('nosniff');
    expect(docs.headers.get('x-frame-options')).toBe('DENY');
    expect(docs.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    // API answers too.
    expect((await fetch(`${gw.url}/v1/models`)).headers.get('x-content-type-options')).toBe('nosniff');
  });
});

describe('job outputs with the session cookie', () => {
  it('a signed-in user downloads their own finished job with only the cookie; another user gets 403, no cookie 401', async () => {
    const owner = new Browser(gw.url);
    await owner.signUp('jobs-owner@example.com');
    const key = ((await (await owner.api('POST', '/v1/keys', { name: 'speech' })).json()) as { key: string }).key;
    const submitted = await gw.fetch('/v1/audio/speech/jobs', { method: 'POST', key, json: { model: 'tts-1', voice: 'alloy', input: 'Hello there.' } });
    expect(submitted.status).toBe(202);
    const { id } = (await submitted.json()) as { id: string };
    expect(await pollJob(gw, `/v1/audio/speech/jobs/${id}/status`, key)).toMatchObject({ status: 'done' });

    // Only the cookie, as the dashboard's Jobs page links the output.
    const status = await fetch(`${gw.url}/v1/audio/speech/jobs/${id}/status`, { headers: { cookie: cookieHeader(owner.cookies) } });
    expect(status.status).toBe(200);
    const download = await fetch(`${gw.url}/v1/audio/speech/jobs/${id}/download`, { headers: { cookie: cookieHeader(owner.cookies) } });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('audio/mpeg');
    expect(Buffer.from(await download.arrayBuffer())).toEqual(audioBytes('openai-alloy'));

    const stranger = new Browser(gw.url);
    await stranger.signUp('jobs-stranger@example.com');
    const refused = await fetch(`${gw.url}/v1/audio/speech/jobs/${id}/download`, { headers: { cookie: cookieHeader(stranger.cookies) } });
    expect(refused.status).toBe(403);
    expect(await errorBody(refused)).toMatchObject({ type: 'permission_error', code: 'unauthorized_job_access', param: 'id' });

    const anonymous = await fetch(`${gw.url}/v1/audio/speech/jobs/${id}/download`);
    expect(anonymous.status).toBe(401);
    expect((await errorBody(anonymous)).code).toBe('invalid_api_key');

    // The transcription download route takes the cookie the same way (a speech job is not one of its jobs).
    const other = await fetch(`${gw.url}/v1/audio/transcriptions/jobs/${id}/download`, { headers: { cookie: cookieHeader(owner.cookies) } });
    expect(other.status).toBe(404);
    expect((await errorBody(other)).code).toBe('job_not_found');
  });
});
