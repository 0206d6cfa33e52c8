// Graceful shutdown, measured (decision 0029), on PostgreSQL and Redis through the real CLI:
// - at SIGTERM the listener closes, requests already on a connection are served with
//   `Connection: close`, /readyz answers 503 while draining, and a stream still open at
//   SHUTDOWN_TIMEOUT_MS ends with an error event (not cut mid-frame) and is billed for what it used;
// - a rolling restart of two instances behind nginx (retrying the other on connection errors) under
//   a load of plain and streaming requests fails none of them, and a stream in flight on the
//   instance being stopped completes; the ledger then holds exactly the requests answered, and no
//   reservation is left held.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { Agent, Client, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomToken } from '../../server/runtime/secrets.ts';
import { startFakeUpstreams, type FakeUpstreams } from '../helpers/fake-upstreams.ts';
import { TEST_REDIS_URL, freshPostgres } from '../helpers/gateway.ts';
import { baseEnv, chat, newKey, shutdownTestConfig, spawnServe, type CliGateway } from '../helpers/cli-gateway.ts';

let fake: FakeUpstreams;
let db: Awaited<ReturnType<typeof freshPostgres>>;
let work: string;
let config: string;
const adminToken = `mga-${randomToken(30)}`;
const spawned: CliGateway[] = [];

beforeAll(async () => {
  fake = await startFakeUpstreams();
  db = await freshPostgres();
  work = mkdtempSync(path.join(tmpdir(), 'mg-shutdown-'));
  config = path.join(work, 'gateway.config.yaml');
  writeFileSync(config, shutdownTestConfig(fake.url));
}, 60_000);

afterAll(async () => {
  await Promise.all(spawned.map((g) => g.stop('SIGKILL')));
  await fake?.close();
  await db?.drop();
  if (work) rmSync(work, { recursive: true, force: true });
}, 30_000);

const prefix = `mgtest:${randomToken(6)}:`;
/** One gateway process (one worker) on `port`, with this DATA_DIR. */
async function instance(name: string, port: number, env: NodeJS.ProcessEnv = {}): Promise<CliGateway> {
  const gw = await spawnServe({
    args: ['--workers', '1'],
    env: { ...baseEnv(), PORT: String(port), DATABASE_URL: db.url, REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix, GATEWAY_CONFIG: config, GATEWAY_ADMIN_TOKEN: adminToken, ...env },
    dataDir: path.join(work, name),
  });
  spawned.push(gw);
  return gw;
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function sql<T>(q: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    return (await c.query(q, params)).rows as T[];
  } finally {
    await c.end();
  }
}

const drainedMs = (gw: CliGateway) => gw.logs().find((l) => l.msg.startsWith('HTTP drained in'))?.drain_ms as number | undefined;

describe('one instance at SIGTERM', () => {
  it('serves what is on its connections with Connection: close, says 503 on /readyz, and ends a stream still open at the bound with an error event, billed', async () => {
    const port = await freePort();
    const gw = await instance('bound', port, { SHUTDOWN_TIMEOUT_MS: '1500', SHUTDOWN_DELAY_MS: '300' });
    const key = await newKey(gw.url, adminToken);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    // A ~30 s stream, under way.
    const long = await request(`${gw.url}/v1/chat/completions`, { method: 'POST', headers, body: JSON.stringify(chat('long-stream', true)) });
    expect(long.statusCode).toBe(200);
    const requestId = long.headers['x-request-id'] as string;
    const frames: string[] = [];
    const streamEnd = (async () => {
      for await (const chunk of long.body) frames.push(chunk.toString());
    })();
    while (!frames.length) await sleep(10);
    // Keep-alive connections: one with a request in flight when the signal comes, two idle.
    const busy = new Client(gw.url, { pipelining: 1 });
    const idle = new Client(gw.url, { pipelining: 1 });
    const spare = new Client(gw.url, { pipelining: 1 });
    for (const c of [idle, spare]) await (await c.request({ path: '/readyz', method: 'GET' })).body.dump();
    const inFlight = busy.request({ path: '/v1/chat/completions', method: 'POST', headers, body: JSON.stringify(chat('delayed')) });
    await sleep(100);
    const sent = Date.now();
    gw.child.kill('SIGTERM');
    await sleep(100);
    // During SHUTDOWN_DELAY_MS: not ready, and what arrives is served and closes its connection.
    const ready = await idle.request({ path: '/readyz', method: 'GET' });
    expect([ready.statusCode, ready.headers.connection]).toEqual([503, 'close']);
    expect(await ready.body.json()).toEqual({ status: 'unavailable', checks: { shutdown: 'draining: this instance is shutting down' } });
    // A request arriving on an idle keep-alive connection: served, and its connection then closed.
    const late = await spare.request({ path: '/v1/chat/completions', method: 'POST', headers, body: JSON.stringify(chat('delayed')) });
    expect([late.statusCode, late.headers.connection]).toEqual([200, 'close']);
    await late.body.dump();
    const answered = await inFlight;
    expect([answered.statusCode, answered.headers.connection]).toEqual([200, 'close']);
    await answered.body.dump();
    // The bound: the stream ends with one error event in its format, after whole frames.
    await streamEnd;
    const text = frames.join('');
    const events = text.split('\n\n').filter(Boolean);
    expect(events.every((e) => e.startsWith('data: '))).toBe(true);
    const last = JSON.parse(events.at(-1)!.slice('data: '.length)) as { error: { code: string; type: string } };
    expect(last.error).toMatchObject({ code: 'server_shutting_down', type: 'server_error' });
    expect(text).not.toContain('[DONE]');
    const end = await gw.exited;
    const stopMs = Date.now() - sent;
    expect(end).toEqual({ code: 0, signal: null });
    // 300 ms delay + 1500 ms bound, then the stores: well under the hard limit.
    expect(stopMs).toBeGreaterThanOrEqual(1_800);
    expect(stopMs).toBeLessThan(6_000);
    expect(gw.logs().some((l) => l.msg.includes('1 stream(s) ended with a server_shutting_down error event'))).toBe(true);
    // Flushed at the stop: the stream's row, billed for what was streamed.
    const [row] = await sql<{ status: number; error_code: string; billed_tokens: string }>('SELECT status, error_code, billed_tokens FROM usage_records WHERE request_id = $1', [requestId]);
    expect(row).toMatchObject({ status: 503, error_code: 'server_shutting_down' });
    expect(Number(row!.billed_tokens)).toBeGreaterThan(0);
    await Promise.all([busy.close(), idle.close(), spare.close()]);
  }, 30_000);
});

const hasNginx = spawnSync('sh', ['-c', 'command -v nginx']).status === 0;

/**
 * nginx in front of both instances: keep-alive to them, the other one tried on a connection error.
 * `non_idempotent` because two races no server can close lose POSTs it never read: connections
 * still in the kernel's accept queue when the listener closes are reset, and so are those that reach
 * a start-up's port check (a listen of a few microseconds); a connection closed as idle can race
 * with a request too. nginx retries a POST only with `non_idempotent`; the test checks that every
 * request it sent twice was one the stopped instance never read.
 */
async function startNginx(port: number, upstreams: number[]): Promise<ChildProcess> {
  const dir = path.join(work, 'nginx');
  mkdirSync(path.join(dir, 'logs'), { recursive: true });
  writeFileSync(
    path.join(dir, 'nginx.conf'),
    `worker_processes 1; error_log ${dir}/logs/error.log; pid ${dir}/nginx.pid; daemon off;
events { worker_connections 1024; }
http {
  log_format tries '$request_id "$upstream_addr" "$upstream_status"';
  access_log ${dir}/logs/access.log tries; client_body_temp_path ${dir}; proxy_temp_path ${dir};
  upstream gateway {
    ${upstreams.map((p) => `server 127.0.0.1:${p} max_fails=0;`).join('\n    ')}
    keepalive 32;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://gateway;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_next_upstream error timeout non_idempotent;
      # The gateway takes it as the request's id (its log lines, its ledger row).
      proxy_set_header X-Request-Id $request_id;
    }
  }
}`,
  );
  const proc = spawn('nginx', ['-p', dir, '-c', path.join(dir, 'nginx.conf')], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    try {
      await fetch(`http://127.0.0.1:${port}/healthz`);
      return proc;
    } catch {
      await sleep(50);
    }
  }
  throw new Error('nginx did not start');
}

describe.skipIf(!hasNginx)('a rolling restart behind nginx', () => {
  it('fails no request, plain or streaming, and the instance being stopped finishes its stream', async () => {
    const started = Date.now();
    const [portA, portB, portProxy] = [await freePort(), await freePort(), await freePort()];
    let [a, b] = await Promise.all([instance('a', portA), instance('b', portB)]);
    const nginx = await startNginx(portProxy, [portA, portB]);
    try {
      const key = await newKey(a.url, adminToken);
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      const proxy = `http://127.0.0.1:${portProxy}`;
      // The clients keep their connections to nginx; nginx keeps its own to the instances.
      const agent = new Agent({ connections: 16, pipelining: 1 });
      type Outcome = { ok: boolean; what: string };
      const outcomes: Outcome[] = [];
      let load = true;
      const plain = async () => {
        while (load) {
          try {
            const res = await request(`${proxy}/v1/chat/completions`, { method: 'POST', dispatcher: agent, headers, body: JSON.stringify(chat('quick')) });
            const body = await res.body.text();
            outcomes.push({ ok: res.statusCode === 200 && body.includes('"choices"'), what: `plain ${res.statusCode} ${body.slice(0, 200)}` });
          } catch (err) {
            outcomes.push({ ok: false, what: `plain ${String(err)}` });
          }
        }
      };
      const streaming = async () => {
        while (load) {
          try {
            const res = await request(`${proxy}/v1/chat/completions`, { method: 'POST', dispatcher: agent, headers, body: JSON.stringify(chat('short-stream', true)) });
            const body = await res.body.text();
            outcomes.push({ ok: res.statusCode === 200 && body.trimEnd().endsWith('data: [DONE]'), what: `stream ${res.statusCode} …${body.slice(-200)}` });
          } catch (err) {
            outcomes.push({ ok: false, what: `stream ${String(err)}` });
          }
        }
      };
      const loops = [plain(), plain(), plain(), plain(), streaming(), streaming(), streaming()];

      /** SIGTERM with a stream of its own in flight, straight to it; the stream must end with [DONE]. Returns the restarted instance. */
      const restart = async (gw: CliGateway, name: string, port: number) => {
        await sleep(1_000);
        const own = await request(`${gw.url}/v1/chat/completions`, { method: 'POST', headers, body: JSON.stringify(chat('short-stream', true)) });
        const reading = own.body.text();
        const sent = Date.now();
        gw.child.kill('SIGTERM');
        expect((await reading).trimEnd().endsWith('data: [DONE]')).toBe(true);
        expect(await gw.exited).toEqual({ code: 0, signal: null });
        const stopMs = Date.now() - sent;
        const next = await instance(`${name}-2`, port);
        return { next, stopMs, drainMs: drainedMs(gw)! };
      };
      const stopped: CliGateway[] = [a, b];
      const ra = await restart(a, 'a', portA);
      a = ra.next;
      const rb = await restart(b, 'b', portB);
      b = rb.next;
      await sleep(1_000);
      load = false;
      await Promise.all(loops);
      await agent.close();

      const failed = outcomes.filter((o) => !o.ok);
      // nginx says what it saw of a failure (which instance, what the connection did).
      expect(failed.map((o) => o.what), readFileSync(path.join(work, 'nginx/logs/error.log'), 'utf8')).toEqual([]);
      expect(outcomes.length).toBeGreaterThan(100);
      const streams = outcomes.filter((o) => o.what.startsWith('stream')).length;
      expect(streams).toBeGreaterThan(10);
      // Each drain waited for the streams in flight (~1.1 s each) and no longer than that by much.
      for (const r of [ra, rb]) expect(r.drainMs).toBeLessThan(5_000);
      // What nginx sent twice: refused connections (an instance down), and the races above. No
      // request was worked on by two instances: no id is in the request lines of two.
      const resent = readFileSync(path.join(work, 'nginx/logs/access.log'), 'utf8')
        .split('\n')
        .filter((l) => l.includes(', '))
        .map((l) => l.split(' ')[0]!);
      const servedBy = new Map<unknown, number>();
      for (const g of [...stopped, a, b]) for (const id of new Set(g.logs().filter((l) => l.http).map((l) => l.reqId))) servedBy.set(id, (servedBy.get(id) ?? 0) + 1);
      // Served by two would be a request worked on twice. Seen by none is a stopped instance's log
      // lines not yet written when it exited (its ledger rows are checked below), not a failure.
      const odd = resent.filter((id) => (servedBy.get(id) ?? 0) > 1);
      const detail = odd.map((id) => [id, ...[...stopped, a, b].flatMap((g, i) => g.logs().filter((l) => l.reqId === id).map((l) => `#${i} ${l.time} ${l.msg}`))].join(' | '));
      expect(odd, `${detail.join('\n')}\n${readFileSync(path.join(work, 'nginx/logs/access.log'), 'utf8').split('\n').filter((l) => odd.some((id) => l.startsWith(id))).join('\n')}`).toEqual([]);
      const lostSends = readFileSync(path.join(work, 'nginx/logs/error.log'), 'utf8').split('\n').filter((l) => l.includes('while reading response header from upstream')).length;
      console.log(
        `rolling restart: ${outcomes.length} requests (${streams} streams), 0 failed; A drained in ${ra.drainMs} ms (stopped in ${ra.stopMs} ms), B in ${rb.drainMs} ms (${rb.stopMs} ms); ` +
          `nginx sent ${resent.length} request(s) to the other instance, ${lostSends} of them after a reset of a connection the instance had not read; ${Math.round((Date.now() - started) / 1000)} s in all`,
      );

      // Every answered request is in the ledger once (the stopped instances flushed theirs), and
      // no reservation is left held: the quota counter is exactly the ledger's sum.
      await Promise.all([a.stop(), b.stop()]);
      // (This test's models: the other test here uses others.)
      const [sums] = await sql<{ n: number; billed: string }>("SELECT count(*)::int AS n, sum(billed_tokens) AS billed FROM usage_records WHERE model IN ('quick', 'short-stream')");
      expect(sums!.n).toBe(outcomes.length + 2);
      const c = await instance('check', await freePort());
      const usage = (await (await fetch(`${c.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()) as { limits: { daily_tokens: { used: number } } };
      expect(usage.limits.daily_tokens.used).toBe(Number(sums!.billed));
    } finally {
      nginx.kill('SIGTERM');
    }
  }, 60_000);
});
