// The request log (issue 36): every request through /v1 leaves a record — refused ones too — with
// its attempts, timings, warnings, and the ledger's usage and cost; GET /v1/requests shows a key
// its own, GET /admin/v1/requests everyone's; bodies are kept only when capture is on, elided and
// capped, a stream as the client received it; records and bodies go after their retention.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody, freshPostgres, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { startFakeUpstreams, type FakeUpstreams } from '../helpers/fake-upstreams.ts';

const ADMIN = 'mga-request-log-admin-token';
let fake: FakeUpstreams;
let gw: TestGateway;
let key: string;
let keyId: string;
let other: string;
let pg: Awaited<ReturnType<typeof freshPostgres>> | null = null;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Rec = Record<string, any>;

async function deadPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  return port;
}

describe.each(['embedded', 'postgresql'] as const)('on the %s database', (database) => {
  beforeAll(async () => {
    fake = await startFakeUpstreams();
    const dead = await deadPort();
    pg = database === 'postgresql' ? await freshPostgres() : null;
    gw = await startTestGateway({
      env: { GATEWAY_ADMIN_TOKEN: ADMIN, ...(pg && { DATABASE_URL: pg.url }) },
      config: `
  routing: { circuit_breaker: { enabled: false } }
  providers:
    - { id: good, type: openai, base_url: "${fake.url}/v1", api_key: sk-good }
    - { id: dead, type: openai, base_url: "http://127.0.0.1:${dead}/v1", api_key: sk-dead, connect_timeout_ms: 500 }
  models:
    - id: exact
      endpoint: chat
      pricing: { prompt: "0.000001", completion: "0.000002" }
      upstreams: [{ provider: good, model: exact-model }]
    - id: dead-then-good
      endpoint: chat
      upstreams: [{ provider: dead, model: anything }, { provider: good, model: exact-model }]
  plans:
    - { id: free, rank: 0, daily_tokens: 10000000, requests_per_minute: 1000 }
  key_cache_ttl_ms: 200
  `,
    });
    key = await gw.newKey();
    other = await gw.newKey();
    const user = await gw.services.db.prisma.apiKey.findFirstOrThrow({ orderBy: { createdAt: 'asc' } });
    keyId = user.id;
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
    await pg?.drop();
  });

  const chat = (model: string, extra: Rec = {}, as = key) =>
    gw.fetch('/v1/chat/completions', { method: 'POST', key: as, json: { model, max_tokens: 5, messages: [{ role: 'user', content: 'Say ok, briefly please!' }], ...extra } });

  async function list(path: string, as?: string): Promise<{ status: number; body: Rec }> {
    await Promise.all([gw.services.requestLog.flush(), gw.services.ledger.flush()]);
    const res = await gw.fetch(path, { headers: { authorization: `Bearer ${as ?? ADMIN}` } });
    return { status: res.status, body: (await res.json()) as Rec };
  }

  const one = async (requestId: string): Promise<Rec> => {
    const { body } = await list('/admin/v1/requests?limit=200');
    const found = body.data.find((r: Rec) => r.request_id === requestId);
    expect(found, `record of ${requestId}`).toBeTruthy();
    return found;
  };

  describe('records', () => {
    it('an answered request: who, what, the attempt, timings, and the ledger’s usage and cost', async () => {
      const res = await chat('exact');
      expect(res.status).toBe(200);
      await res.json();
      const id = res.headers.get('x-request-id')!;
      const r = await one(id);
      const stored = await gw.services.db.prisma.apiKey.findUniqueOrThrow({ where: { id: keyId } });
      expect(r).toMatchObject({
        object: 'request',
        request_id: id,
        method: 'POST',
        path: '/v1/chat/completions',
        endpoint: 'chat',
        format: 'openai',
        model: 'exact',
        status: 200,
        error_code: null,
        stream: false,
        aborted: false,
        job_id: null,
        key: { id: keyId, prefix: stored.prefix, name: stored.name },
        user_id: stored.userId,
        oauth_app_id: null,
        upstream: 'good',
        warnings: [],
        bodies: null,
        usage: {
          prompt_tokens: 10,
          completion_tokens: 5,
          cached_tokens: 0,
          reasoning_tokens: 0,
          billed_tokens: 15,
          cost: '0.00002',
          source: 'reported',
        },
      });
      expect(r.attempts).toEqual([{ provider: 'good', key: null, upstream_model: 'exact-model', start_ms: expect.any(Number), ms: expect.any(Number), status: null, failure: null, late_failure: null }]);
      expect(r.first_token_ms).toBeGreaterThanOrEqual(r.attempts[0].start_ms);
      expect(r.latency_ms).toBeGreaterThanOrEqual(r.first_token_ms);
      expect(Date.parse(r.created_at)).toBeGreaterThan(Date.now() - 60_000);
    });

    it('a failover: every attempt in order, the failed ones with their class', async () => {
      const res = await chat('dead-then-good');
      expect(res.status).toBe(200);
      const r = await one(res.headers.get('x-request-id')!);
      expect(r.upstream).toBe('good');
      expect(r.attempts.map((a: Rec) => [a.provider, a.failure])).toEqual([
        ['dead', 'upstream_unreachable'],
        ['dead', 'upstream_unreachable'],
        ['good', null],
      ]);
      for (let i = 1; i < r.attempts.length; i++) expect(r.attempts[i].start_ms).toBeGreaterThanOrEqual(r.attempts[i - 1].start_ms + r.attempts[i - 1].ms - 1); // each rounded to the ms
    });

    it('a stream is marked, and its first token comes before its end', async () => {
      const res = await chat('exact', { stream: true });
      expect(res.status).toBe(200);
      await res.text();
      const r = await one(res.headers.get('x-request-id')!);
      expect(r).toMatchObject({ stream: true, status: 200, upstream: 'good', usage: { prompt_tokens: 10, completion_tokens: 5 } });
      expect(r.first_token_ms).toBeLessThanOrEqual(r.latency_ms);
    });

    it('each client format is named: Messages (anthropic) and generateContent (gemini, the model from the path)', async () => {
      const messages = await gw.fetch('/v1/messages', { method: 'POST', headers: { 'x-api-key': key }, json: { model: 'exact', max_tokens: 5, messages: [{ role: 'user', content: 'Say ok' }] } });
      expect(messages.status).toBe(200);
      expect(await one(messages.headers.get('x-request-id')!)).toMatchObject({ format: 'anthropic', endpoint: 'messages', model: 'exact', status: 200, usage: { prompt_tokens: 10 } });
      const gemini = await gw.fetch('/v1beta/models/exact:generateContent', {
        method: 'POST',
        headers: { 'x-goog-api-key': key },
        json: { contents: [{ role: 'user', parts: [{ text: 'Say ok' }] }], generationConfig: { maxOutputTokens: 5 } },
      });
      expect(gemini.status).toBe(200);
      expect(await one(gemini.headers.get('x-request-id')!)).toMatchObject({
        format: 'gemini',
        endpoint: 'generateContent',
        model: 'exact',
        path: '/v1beta/models/exact:generateContent',
        status: 200,
        stream: false,
        usage: { prompt_tokens: 10, completion_tokens: 5 },
      });
    });

    it('API reads with a key are recorded; anonymous reads of the public catalog are not', async () => {
      const usage = await gw.fetch('/v1/usage', { key });
      expect(usage.status).toBe(200);
      const models = await gw.fetch('/v1/models');
      expect(models.status).toBe(200);
      expect(await one(usage.headers.get('x-request-id')!)).toMatchObject({ method: 'GET', path: '/v1/usage', status: 200, key: { id: keyId }, endpoint: null, usage: null });
      const { body } = await list('/admin/v1/requests?limit=200');
      expect(body.data.filter((r: Rec) => r.request_id === models.headers.get('x-request-id'))).toEqual([]);
    });

    it('refused requests are recorded: an unknown credential (no key), an unknown model (with its key)', async () => {
      const unauth = await gw.fetch('/v1/chat/completions', { method: 'POST', key: 'mg-not-a-key', json: { model: 'exact', messages: [] } });
      expect(unauth.status).toBe(401);
      const a = await one(unauth.headers.get('x-request-id')!);
      // What the route is comes from the route that matched, before its credential was checked.
      expect(a).toMatchObject({ status: 401, error_code: 'invalid_api_key', endpoint: 'chat', format: 'openai', key: null, user_id: null, usage: null, attempts: [] });
      const messages = await gw.fetch('/v1/messages', { method: 'POST', key: 'mg-not-a-key', json: { model: 'exact', max_tokens: 8, messages: [] } });
      expect(await one(messages.headers.get('x-request-id')!)).toMatchObject({ status: 401, endpoint: 'messages', format: 'anthropic' });
      const unknown = await chat('no-such-model');
      expect(unknown.status).toBe(400);
      const code = (await errorBody(unknown)).code;
      const b = await one(unknown.headers.get('x-request-id')!);
      expect(b).toMatchObject({ status: 400, error_code: code, model: 'no-such-model', key: { id: keyId }, attempts: [], usage: null });
    });
  });

  describe('GET /v1/requests and /admin/v1/requests', () => {
    it('a key reads its own records only; naming another key is 404', async () => {
      const mine = await chat('exact', {}, other);
      const { status, body } = await list('/v1/requests', other);
      expect(status).toBe(200);
      expect(body.object).toBe('list');
      expect(body.data.map((r: Rec) => r.request_id)).toEqual([mine.headers.get('x-request-id')]);
      const foreign = await list(`/v1/requests?key=${keyId}`, other);
      expect(foreign.status).toBe(404);
      expect(foreign.body.error).toMatchObject({ code: 'key_not_found', param: 'key' });
    });

    it('pages newest first by cursor, every record once; filters by status class and model', async () => {
      for (let i = 0; i < 5; i++) await (await chat('exact')).json();
      const all: Rec[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const { body }: { body: Rec } = await list(`/v1/requests?limit=3${cursor ? `&cursor=${cursor}` : ''}`, key);
        all.push(...body.data);
        cursor = body.next_cursor;
        pages++;
      } while (cursor);
      const whole = (await list('/v1/requests?limit=200', key)).body.data as Rec[];
      expect(all.map((r) => r.request_id)).toEqual(whole.map((r) => r.request_id));
      expect(pages).toBe(Math.ceil(whole.length / 3));
      const times = whole.map((r) => Date.parse(r.created_at));
      expect([...times].sort((a, b) => b - a)).toEqual(times);
      const errorsOnly = (await list('/v1/requests?status=4xx', key)).body.data as Rec[];
      expect(errorsOnly.length).toBeGreaterThan(0);
      expect(errorsOnly.every((r) => r.status >= 400 && r.status < 500)).toBe(true);
      const exact = (await list('/v1/requests?model=exact&status=200', key)).body.data as Rec[];
      expect(exact.every((r) => r.model === 'exact' && r.status === 200)).toBe(true);
      expect(exact.length).toBe(whole.filter((r) => r.model === 'exact' && r.status === 200).length);
    });

    it('the admin list filters by user; bad filters are 400 with their parameter', async () => {
      const owner = (await gw.services.db.prisma.apiKey.findUniqueOrThrow({ where: { id: keyId } })).userId;
      const { body } = await list(`/admin/v1/requests?user=${owner}&limit=200`);
      expect(body.data.length).toBeGreaterThan(0);
      expect(body.data.every((r: Rec) => r.user_id === owner)).toBe(true);
      const bad = await list('/admin/v1/requests?cursor=bm9wZQ');
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatchObject({ type: 'invalid_request_error', param: 'cursor' });
      const badStatus = await list('/admin/v1/requests?status=teapot');
      expect(badStatus.status).toBe(400);
      expect(badStatus.body.error.param).toBe('status');
      const unknownUser = await list('/admin/v1/requests?user=nobody@example.com');
      expect(unknownUser.status).toBe(404);
      expect(unknownUser.body.error.code).toBe('user_not_found');
    });
  });

  describe('bodies', () => {
    it('off by default; switched on for one key, kept elided and as the client received them (a stream too)', async () => {
      const patch = await gw.fetch(`/admin/v1/keys/${keyId}`, { method: 'PATCH', headers: { authorization: `Bearer ${ADMIN}` }, json: { capture_bodies: true } });
      expect(patch.status).toBe(200);
      expect(((await patch.json()) as Rec).capture_bodies).toBe(true);
      await sleep(300); // the key cache's TTL
      const image = `data:image/png;base64,${'iVBORw0KGgo'.repeat(60)}`;
      const res = await chat('exact', { user: 'u-1', metadata: { api_key: 'sk-live-secret-value' }, messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: image } }] }] });
      const answer = await res.text();
      const r = await one(res.headers.get('x-request-id')!);
      expect(r.bodies).toMatchObject({ request_url: expect.stringContaining('/v1/files/'), response_url: expect.stringContaining('/v1/files/') });
      const sent = await (await fetch(r.bodies.request_url)).text();
      expect(sent).toContain('"model":"exact"');
      expect(sent).toContain('"api_key":"[redacted]"');
      expect(sent).not.toContain('sk-live-secret-value');
      expect(sent).toContain('data:image/png;base64,[elided: 495 bytes]');
      expect(await (await fetch(r.bodies.response_url)).text()).toBe(answer);

      const stream = await chat('exact', { stream: true });
      const events = await stream.text();
      const s = await one(stream.headers.get('x-request-id')!);
      expect(await (await fetch(s.bodies.response_url)).text()).toBe(events);
      expect(events).toContain('data: [DONE]');

      // Downloading a body is not itself recorded: its path is a signed link.
      const { body: everything } = await list('/admin/v1/requests?limit=200');
      expect(everything.data.filter((x: Rec) => x.path.startsWith('/v1/files/'))).toEqual([]);

      // Another key's requests are not captured.
      const plain = await chat('exact', {}, other);
      expect((await one(plain.headers.get('x-request-id')!)).bodies).toBeNull();
    });

    it('retention deletes bodies after their days and records after theirs', async () => {
      const before = (await gw.services.db.sql.query(`SELECT count(*)::int AS n FROM request_log`))[0]!.n as number;
      const withBodies = await gw.services.db.sql.query(`SELECT id, bodies_key FROM request_log WHERE bodies_key IS NOT NULL`);
      expect(withBodies.length).toBeGreaterThan(0);
      // Ten days old: past the bodies' 7 days, within the records' 30.
      await gw.services.db.sql.query(`UPDATE request_log SET created_at = created_at - interval '10 days' WHERE bodies_key IS NOT NULL`);
      expect(await gw.services.requestLog.upkeep()).toEqual({ deleted: 0, bodiesDeleted: withBodies.length });
      expect(await gw.services.jobs.blobs.stat(`${withBodies[0]!.bodies_key}request`)).toBeNull();
      await gw.services.db.sql.query(`UPDATE request_log SET created_at = created_at - interval '30 days' WHERE id = ANY($1::bigint[])`, [withBodies.map((r) => String(r.id))]);
      expect(await gw.services.requestLog.upkeep()).toEqual({ deleted: withBodies.length, bodiesDeleted: 0 });
      expect((await gw.services.db.sql.query(`SELECT count(*)::int AS n FROM request_log`))[0]!.n).toBe(before - withBodies.length);
    });
  });
});
