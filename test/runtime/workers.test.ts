// `model-gateway serve --workers N` (decision 0029), through the real CLI: N processes on one port,
// each answering; one killed is replaced while the others keep answering; /metrics sums them; a
// SIGTERM to the primary drains every worker; and the refusals without PostgreSQL and Redis.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StartupError } from '../../server/runtime/data-dir.ts';
import { restartDelayMs, workerCount } from '../../server/runtime/cluster.ts';
import { randomToken } from '../../server/runtime/secrets.ts';
import { startFakeUpstreams, type FakeUpstreams } from '../helpers/fake-upstreams.ts';
import { TEST_REDIS_URL, freshPostgres } from '../helpers/gateway.ts';
import { baseEnv, chat, newKey, postOnce, shutdownTestConfig, spawnServe, type Answer, type CliGateway, type LogLine } from '../helpers/cli-gateway.ts';

describe('how many workers', () => {
  const shared = { DATABASE_URL: 'postgres://db/x', REDIS_URL: 'redis://r' };
  it('defaults to the cores with DATABASE_URL and REDIS_URL, else 1; --workers wins over WORKERS', () => {
    expect(workerCount(undefined, shared, 8)).toBe(8);
    expect(workerCount(undefined, {}, 8)).toBe(1);
    expect(workerCount(undefined, { DATABASE_URL: 'postgres://db/x' }, 8)).toBe(1);
    expect(workerCount(undefined, { ...shared, WORKERS: '3' }, 8)).toBe(3);
    expect(workerCount('2', { ...shared, WORKERS: '3' }, 8)).toBe(2);
    expect(workerCount('1', { WORKERS: '4' }, 8)).toBe(1);
  });
  it('refuses more than one without PostgreSQL and Redis, and what is not a count', () => {
    expect(() => workerCount(undefined, { WORKERS: '2' }, 8)).toThrow(StartupError);
    expect(() => workerCount('2', { DATABASE_URL: 'postgres://db/x' }, 8)).toThrow(/need Redis \(REDIS_URL\)/);
    for (const bad of ['0', '-1', 'two', '1.5', '100000']) expect(() => workerCount(bad, shared, 8), bad).toThrow(/whole number from 1 to 256/);
  });
  it('replaces a dead worker after 250 ms, doubling with each death in the last minute, at most 30 s', () => {
    expect([1, 2, 3, 4, 20].map(restartDelayMs)).toEqual([250, 500, 1000, 2000, 30_000]);
  });
});

describe('refusals, through the CLI', () => {
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(path.join(tmpdir(), 'mg-workers-refuse-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  const run = async (args: string[], env: NodeJS.ProcessEnv) => {
    const gw = await spawnServe({ env: { ...baseEnv(), PORT: '0', ...env }, dataDir: path.join(work, randomToken(6)), args, waitForInfo: false });
    const end = await gw.exited;
    return { code: end.code, out: gw.output() };
  };

  it('the embedded database with 2 workers (WORKERS, or --workers over WORKERS=1): exit 1 at once, saying what is needed and why', async () => {
    const [byEnv, byFlag, noRedis, flagWins] = await Promise.all([
      run([], { WORKERS: '2' }),
      run(['--workers', '2'], { WORKERS: '1' }),
      run(['--workers', '2'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' }),
      // --workers 1 wins over WORKERS=2: no refusal, the next check (the port) fails instead.
      run(['--workers', '1'], { WORKERS: '2', PORT: 'eighty' }),
    ]);
    for (const r of [byEnv, byFlag]) {
      expect(r.code).toBe(1);
      expect(r.out).toContain('2 worker processes need PostgreSQL (DATABASE_URL) and Redis (REDIS_URL)');
      expect(r.out).toContain('The embedded database can be opened by one process only');
      expect(r.out).toContain("would let 2 workers allow 2 times a plan's limits");
    }
    expect(byEnv.out).toContain('WORKERS=2:');
    expect(byFlag.out).toContain('--workers 2:');
    expect(noRedis.code).toBe(1);
    expect(noRedis.out).toContain('need Redis (REDIS_URL) as well as PostgreSQL');
    expect(flagWins.code).toBe(1);
    expect(flagWins.out).toContain('PORT eighty is not a port number');
    expect(flagWins.out).not.toContain('worker processes need');
  }, 30_000);
});

describe('serve --workers 2 on PostgreSQL and Redis', () => {
  let fake: FakeUpstreams;
  let db: Awaited<ReturnType<typeof freshPostgres>>;
  let work: string;
  let gw: CliGateway;
  let key: string;
  const adminToken = `mga-${randomToken(30)}`;

  beforeAll(async () => {
    fake = await startFakeUpstreams();
    db = await freshPostgres();
    work = mkdtempSync(path.join(tmpdir(), 'mg-workers-'));
    const config = path.join(work, 'gateway.config.yaml');
    writeFileSync(config, shutdownTestConfig(fake.url));
    gw = await spawnServe({
      // WORKERS=1 in the environment: the flag wins.
      args: ['--workers', '2'],
      env: { ...baseEnv(), PORT: '0', WORKERS: '1', DATABASE_URL: db.url, REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: `mgtest:${randomToken(6)}:`, GATEWAY_CONFIG: config, GATEWAY_ADMIN_TOKEN: adminToken },
      dataDir: path.join(work, 'data'),
    });
    // server.json is written when the first worker serves; both do once each says so.
    for (const n of [1, 2]) await gw.waitForLog((l) => l.msg.startsWith(`worker ${n} (pid`) && l.msg.includes('ready in'));
    await gw.waitForLog((l) => l.msg.includes('listening on') && l.msg.includes('with 2 workers'));
    // The primary's, which outlives its workers; it counts those serving.
    expect(JSON.parse(readFileSync(path.join(gw.dataDir, 'server.json'), 'utf8'))).toMatchObject({ pid: gw.child.pid, url: gw.url, workers: 2, serving: 2 });
    key = await newKey(gw.url, adminToken);
  }, 90_000);

  afterAll(async () => {
    await gw?.kill();
    await fake?.close();
    await db?.drop();
    if (work) rmSync(work, { recursive: true, force: true });
  }, 30_000);

  const auth = () => ({ authorization: `Bearer ${key}` });
  const requestLines = (from: number) => gw.logs().filter((l) => l.time >= from && l.http?.url === '/v1/chat/completions');

  it('answers from both workers, each log line names its worker, and /metrics sums the workers', async () => {
    const from = Date.now();
    const answers = await Promise.all(Array.from({ length: 30 }, () => postOnce(gw.url, '/v1/chat/completions', auth(), chat('quick'))));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    await sleep(200);
    const lines = requestLines(from);
    expect(lines).toHaveLength(30);
    const byWorker = new Map<number, number>();
    for (const l of lines) byWorker.set(l.worker!, (byWorker.get(l.worker!) ?? 0) + 1);
    expect([...byWorker.keys()].sort()).toEqual([1, 2]);
    // The primary's own lines name no worker; every worker's line does.
    expect(gw.logs().filter((l) => l.worker === undefined).every((l) => l.pid === gw.child.pid)).toBe(true);
    // A scrape reaches one worker; what it serves counts both workers' requests.
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('gateway_http_requests_total') && l.includes('route="/v1/chat/completions"') && l.includes('status="200"'));
    expect(line?.split(' ').pop()).toBe('30');
  });

  it('a worker killed with SIGKILL is replaced (same number, new pid) while requests keep succeeding', async () => {
    const ready = (n: number) => gw.logs().filter((l) => l.msg.startsWith(`worker ${n} (pid`) && l.msg.includes('ready in'));
    const victim = ready(2).at(-1)!.worker_pid!;
    const results: { at: number; answer: Answer }[] = [];
    let load = true;
    const loops = Array.from({ length: 4 }, async () => {
      while (load) {
        const at = Date.now();
        results.push({ at, answer: await postOnce(gw.url, '/v1/chat/completions', auth(), chat('quick')) });
      }
    });
    await sleep(300);
    process.kill(victim, 'SIGKILL');
    const noticed = await gw.waitForLog((l) => l.worker_pid === victim && l.msg.includes('exited unexpectedly (signal SIGKILL); a new worker 2 starts in'));
    const replaced = await gw.waitForLog((l) => l.msg.startsWith('worker 2 (pid') && l.msg.includes('ready in') && l.worker_pid !== victim, 60_000);
    const after = Date.now();
    await sleep(500);
    load = false;
    await Promise.all(loops);
    // Only requests the killed worker held, or that the primary handed it before it saw the exit
    // (those hang: postOnce gives up after 10 s), fail: a few per loop at most, none after the exit was seen.
    const failed = results.filter((r) => r.answer.status !== 200);
    expect(failed.length).toBeLessThanOrEqual(8);
    expect(results.filter((r) => r.at > noticed.time && r.answer.status !== 200)).toEqual([]);
    expect(results.filter((r) => r.at > noticed.time).length).toBeGreaterThan(10);
    // The replacement answers too: its pid on request lines.
    const more = await Promise.all(Array.from({ length: 20 }, () => postOnce(gw.url, '/v1/chat/completions', auth(), chat('quick'))));
    expect(more.every((a) => a.status === 200)).toBe(true);
    await sleep(200);
    expect(requestLines(after).some((l: LogLine) => l.pid === replaced.worker_pid && l.worker === 2)).toBe(true);
  }, 90_000);

  it('SIGTERM to the primary: a stream in flight finishes, every worker stops, the primary exits 0', async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: JSON.stringify(chat('short-stream', true)) });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = new TextDecoder().decode((await reader.read()).value);
    const sent = Date.now();
    gw.child.kill('SIGTERM');
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const end = await gw.exited;
    expect(end).toEqual({ code: 0, signal: null });
    const stopped = gw.logs().filter((l) => /^worker \d \(pid \d+\) stopped \(code 0\)$/.test(l.msg));
    expect(stopped.map((l) => l.worker).sort()).toEqual([1, 2]);
    expect(gw.logs().filter((l) => l.msg.startsWith('HTTP drained in')).length).toBe(2);
    expect(existsSync(path.join(gw.dataDir, 'server.json'))).toBe(false);
    // The stream had ~1 s left: the stop waited for it, and no longer than that by much.
    expect(Date.now() - sent).toBeLessThan(8_000);
  }, 30_000);
});
