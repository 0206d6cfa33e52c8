// Request logs (pino, one JSON line per request) never carry the secrets that travel in query
// strings: authorization codes, states, tokens, client secrets — not even inside `next`.
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Browser } from '../helpers/browser.ts';
import { startOAuthGateway, type OAuthGateway } from '../helpers/oauth.ts';

const lines: string[] = [];
let t: OAuthGateway;

beforeAll(async () => {
  t = await startOAuthGateway('', pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }));
});
afterAll(() => t?.close());

it('request logs never contain codes, states, tokens or secrets from query strings', async () => {
  const user = new Browser(t.gw.url);
  await user.signUp('logan@example.com');
  const app = await t.registerApp();
  const a = await t.authorize(app, user);
  const tokens = await t.exchange(app, a.params, a.verifier);
  const refreshed = await t.refresh(app, tokens.refresh_token!);
  const apiKey: string = ((await (await t.me(refreshed.access_token)).json()) as any).api_key;
  expect((await t.chat(apiKey)).status).toBe(200);
  const secrets = {
    state: a.landed.searchParams.get('state')!,
    code: a.params.get('code')!,
    access: refreshed.access_token,
    refresh: refreshed.refresh_token!,
    client: app.secret!,
    apiKey,
    idpCode: 'idp-code-a1b2c3',
    idpState: 'idp-state-d4e5f6',
  };
  // Secrets where a careless client or a provider puts them: query strings.
  await t.gw.fetch(`/signin/corp/callback?code=${secrets.idpCode}&state=${secrets.idpState}`);
  await t.gw.fetch(`/signin?next=${encodeURIComponent(`/v1/oauth/authorize?client_id=c&state=${secrets.state}`)}`);
  await t.gw.fetch(`/v1/oauth/me?access_token=${secrets.access}`);
  await t.post(`/v1/oauth/token?client_secret=${secrets.client}&refresh_token=${secrets.refresh}&code=${secrets.code}`, { grant_type: 'refresh_token' });
  await t.post(`/v1/oauth/revoke?token=${secrets.access}`, {});
  await t.gw.fetch(`/v1/models?key=${secrets.apiKey}&code_verifier=${a.verifier}`);

  const log = lines.join('');
  expect(log).toContain('/signin/corp/callback?');
  expect(log).toContain('/v1/oauth/authorize?');
  for (const [name, secret] of Object.entries({ ...secrets, verifier: a.verifier })) expect(log, name).not.toContain(secret);
});
