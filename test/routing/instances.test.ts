// Routing through real gateways: two instances sharing PostgreSQL and Redis keep a key pool under
// each key's requests per minute and see each other's open breakers; X-Gateway-Upstream names the
// key; a conversation stays on one key until that key rests.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomToken } from '../../server/runtime/secrets.ts';
import { TEST_REDIS_URL, freshPostgres, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

/** An OpenAI-compatible upstream that counts requests per key, and answers 429 for `limited` keys or 503 while `down`. */
async function countingUpstream() {
  const perKey = new Map<string, number>();
  const state = { down: false, limited: new Set<string>() };
  const server: Server = createServer((req, res) => {
    const key = (req.headers.authorization ?? '').replace('Bearer ', '');
    req.resume();
    req.on('end', () => {
      perKey.set(key, (perKey.get(key) ?? 0) + 1);
      if (state.down) return res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'down', type: 'server_error' } }));
      if (state.limited.has(key)) return res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '30' }).end(JSON.stringify({ error: { message: 'slow down', type: 'rate_limit_error' } }));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, perKey, state, close: () => new Promise<void>((r) => server.close(() => r())) };
}
type Upstream = Awaited<ReturnType<typeof countingUpstream>>;

const config = (pool: string, flaky: string, good: string) => `
routing: { sync_ms: 100, circuit_breaker: { consecutive_failures: 2, cooldown_seconds: 60 } }
providers:
  - id: pool
    type: openai-compatible
    base_url: "${pool}/v1"
    api_keys: [{ key: sk-a, alias: a, requests_per_minute: 4 }, { key: sk-b, requests_per_minute: 3 }]
  - { id: flaky, type: openai-compatible, base_url: "${flaky}/v1", api_key: sk-flaky }
  - { id: good, type: openai-compatible, base_url: "${good}/v1", api_key: sk-good }
  - id: rest
    type: openai-compatible
    base_url: "${pool}/v1"
    api_keys: [sk-r0, sk-r1, sk-r2]
models:
  - { id: pooled, endpoint: chat, upstreams: [{ provider: pool, model: m }] }
  - { id: guarded, endpoint: chat, upstreams: [{ provider: flaky, model: m }, { provider: good, model: m }] }
  - { id: sticky, endpoint: chat, upstreams: [{ provider: rest, model: m }] }
plans:
  - { id: free, rank: 0, daily_tokens: 10000000, requests_per_minute: 100000 }
`;

describe('two instances sharing PostgreSQL and Redis', () => {
  let pool: Upstream, flaky: Upstream, good: Upstream;
  let db: Awaited<ReturnType<typeof freshPostgres>>;
  const gateways: TestGateway[] = [];
  let key: string;
  beforeAll(async () => {
    [pool, flaky, good] = await Promise.all([countingUpstream(), countingUpstream(), countingUpstream()]);
    db = await freshPostgres();
    const env = { DATABASE_URL: db.url, REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: `mgtest:${randomToken(6)}:` };
    gateways.push(await startTestGateway({ config: config(pool.url, flaky.url, good.url), env }));
    gateways.push(await startTestGateway({ config: config(pool.url, flaky.url, good.url), env }));
    key = await gateways[0]!.newKey();
  }, 60_000);
  afterAll(async () => {
    for (const gw of gateways.splice(0)) await gw.close();
    await Promise.all([pool?.close(), flaky?.close(), good?.close()]);
    await db?.drop();
  });

  const chat = (i: number, model: string, messages: unknown[] = [{ role: 'user', content: `hi ${i}` }], extra: Record<string, unknown> = {}) =>
    gateways[i % 2]!.fetch('/v1/chat/completions', { method: 'POST', key, json: { model, messages, ...extra } });

  it("a key pool oversubscribed fivefold over both instances: each key gets exactly its requests per minute, the rest are refused before any call", async () => {
    const answers = await Promise.all(Array.from({ length: 35 }, (_, i) => chat(i, 'pooled')));
    const upstreams = answers.filter((r) => r.status === 200).map((r) => r.headers.get('x-gateway-upstream'));
    expect(upstreams.filter((u) => u === 'pool#a')).toHaveLength(4);
    expect(upstreams.filter((u) => u === 'pool#1')).toHaveLength(3);
    expect(upstreams).toHaveLength(7);
    expect(Object.fromEntries(pool.perKey)).toEqual({ 'sk-a': 4, 'sk-b': 3 });
    const refused = answers.filter((r) => r.status !== 200);
    expect(refused.map((r) => r.status)).toEqual(Array(28).fill(503));
    const body = (await refused[0]!.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('all_upstreams_failed');
    expect(body.error.message).toMatch(/^No upstream of model 'pooled' can take the request now: .*\. Retry in \d+ s\.$/);
    expect(body.error.message).toContain('pool#a [m]: key at its requests_per_minute (4)');
    expect(body.error.message).toContain('pool#1 [m]: key at its requests_per_minute (3)');
    expect(Number(refused[0]!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(JSON.stringify(body)).not.toContain('sk-');
  });

  it('a breaker opened by one instance is respected by the other: no more calls to the dead upstream until its cool-down ends', async () => {
    flaky.state.down = true;
    // One request on each instance: each adds one failure to the shared streak (two attempts, counted once per request).
    for (const i of [0, 1]) {
      const r = await chat(i, 'guarded');
      expect(r.status).toBe(200);
      expect(r.headers.get('x-gateway-upstream')).toBe('good');
    }
    // The second request's first failure made it two in a row: open, and its retry was not sent.
    expect(flaky.perKey.get('sk-flaky')).toBe(3);
    await new Promise((r) => setTimeout(r, 400)); // the other instance reads the shared state
    for (let i = 1; i <= 6; i++) {
      const r = await chat(i, 'guarded');
      expect(r.status).toBe(200);
      expect(r.headers.get('x-gateway-upstream')).toBe('good');
    }
    expect(flaky.perKey.get('sk-flaky')).toBe(3);
    await Promise.all(gateways.map((g) => g.services.health.flush()));
    const status = (await (await gateways[1]!.fetch('/v1/models/status?model=guarded&window=1h')).json()) as { data: { upstreams: { provider: string; errors: number }[] }[] };
    expect(status.data[0]!.upstreams.find((u) => u.provider === 'flaky')).toMatchObject({ errors: 3 });
  });

  it('a conversation stays on one key of the pool on both instances; a 429 moves it to the next key, where it stays', async () => {
    const system = 'You are a careful assistant. '.repeat(200); // ~1,400 tokens: cacheable
    const turns = (n: number) => [{ role: 'system', content: system }, { role: 'user', content: 'Tell me about rivers.' }, ...Array.from({ length: n }, (_, i) => ({ role: i % 2 ? 'user' : 'assistant', content: `turn ${i}` }))];
    const used: string[] = [];
    for (let i = 0; i < 6; i++) used.push((await chat(i, 'sticky', turns(i))).headers.get('x-gateway-upstream')!);
    expect(new Set(used).size).toBe(1);
    const home = used[0]!;
    // Another conversation may land elsewhere, but it too stays put.
    const elsewhere = new Set<string>();
    for (let c = 0; c < 12; c++) elsewhere.add((await chat(c, 'sticky', [{ role: 'system', content: system }, { role: 'user', content: `Conversation ${c}` }])).headers.get('x-gateway-upstream')!);
    expect(elsewhere.size).toBeGreaterThan(1);
    // The home key is rate limited: the conversation moves to one other key, the same on both instances.
    const homeKey = `sk-r${home.split('#')[1]}`;
    const before = pool.perKey.get(homeKey)!;
    pool.state.limited.add(homeKey);
    const moved: string[] = [];
    for (let i = 0; i < 4; i++) moved.push((await chat(i, 'sticky', turns(i))).headers.get('x-gateway-upstream')!);
    await new Promise((r) => setTimeout(r, 300));
    for (let i = 0; i < 4; i++) moved.push((await chat(i, 'sticky', turns(i))).headers.get('x-gateway-upstream')!);
    expect(new Set(moved).size).toBe(1);
    expect(moved[0]).not.toBe(home);
    // The 429 went to the home key once per instance at most (it then rests for its Retry-After).
    expect(pool.perKey.get(homeKey)! - before).toBeLessThanOrEqual(2);
  });
});
