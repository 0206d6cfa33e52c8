// npm run bench -- <overhead|throughput|streams|all|workers|cpu> [--quick] [--workers N]
// npm run bench -- cpu [--against <git ref>]… [--rounds N] [--seconds S] [--store embedded|shared|both]
// Every contender in the same run, against the same mocks, interleaved where it matters. Prints a
// table and writes JSON to bench/results/. Not a test: it asserts nothing.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Agent, Client, request } from 'undici';
import { chatBody, startGateway, startPortkey, writeWrkScript, type Target } from './contenders.ts';
import { hasBinary, startNginx, startNodeMock } from './mocks.ts';
import { spawnNodeFloor } from './node-floor.ts';

const args = process.argv.slice(2);
const scenario = args.find((a) => !a.startsWith('--')) ?? 'all';
const quick = args.includes('--quick');
const results: Record<string, unknown> = { date: new Date().toISOString(), quick, node: process.version, cpus: (await import('node:os')).cpus().length };

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)]! : NaN;
};
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))]! : NaN;
};
const fmt = (n: number, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : '—');
function table(title: string, header: string[], rows: (string | number)[][]) {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const w = header.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  console.log(`\n${title}\n${cells.map((r, j) => r.map((c, i) => (i ? c.padStart(w[i]!) : c.padEnd(w[i]!))).join('  ') + (j === 0 ? `\n${w.map((x) => '-'.repeat(x)).join('  ')}` : '')).join('\n')}`);
}

/** Writes the run's figures to bench/results/. */
function save(name: string) {
  const dir = new URL('./results/', import.meta.url).pathname;
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}${quick ? '-quick' : ''}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify(results, null, 2) + '\n');
  return file;
}

// ---- workers: its own contenders (floors and gateways as 1 and N processes), none of the ones below.
if (scenario === 'workers') {
  const { workersBench } = await import('./workers.ts');
  const at = args.indexOf('--workers');
  results.workers = await workersBench({ quick, workers: at >= 0 ? Number(args[at + 1]) : undefined, table });
  console.log(`\nresults: ${path.relative(process.cwd(), save('workers'))}`);
  process.exit(0);
}

// ---- cpu: builds side by side, each started alone (bench/cpu.ts).
if (scenario === 'cpu') {
  const { cpuBench } = await import('./cpu.ts');
  const opt = (name: string) => (args.indexOf(name) >= 0 ? args[args.indexOf(name) + 1] : undefined);
  const store = opt('--store');
  if (store && !['embedded', 'shared', 'both'].includes(store)) throw new Error('--store: embedded, shared or both');
  results.cpu = await cpuBench({
    quick,
    against: args.flatMap((a, i) => (args[i - 1] === '--against' ? a.split(',') : [])),
    rounds: opt('--rounds') ? Number(opt('--rounds')) : undefined,
    seconds: opt('--seconds') ? Number(opt('--seconds')) : undefined,
    stores: store === 'embedded' ? ['embedded'] : store === 'shared' ? ['shared'] : undefined,
    table,
  });
  console.log(`\nresults: ${path.relative(process.cwd(), save('cpu'))}`);
  process.exit(0);
}

// ---- contenders --------------------------------------------------------------------------------
const useNginx = hasBinary('nginx');
const sse = await startNodeMock(quick ? 20 : 200);
const mockJson = useNginx ? await startNginx() : null;
const jsonUrl = mockJson?.url ?? sse.url;
const nginxFloor = useNginx ? await startNginx(jsonUrl) : null;
const nodeFloor = await spawnNodeFloor(jsonUrl);
const gw = await startGateway({ json: jsonUrl, sse: sse.url });
const gwShared = await startGateway({ json: jsonUrl, sse: sse.url, postgres: true, redisUrl: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379' }).catch((err) => {
  console.log(`(gateway on PostgreSQL + Redis unavailable: ${(err as Error).message.slice(0, 200)})`);
  return null;
});
const portkey = await startPortkey();
const auth = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
const targets: Target[] = [
  { name: 'direct (mock)', url: jsonUrl, path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: chatBody('gpt-4o-mini') },
  ...(nginxFloor?.proxyUrl ? [{ name: 'nginx floor', url: nginxFloor.proxyUrl, path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: chatBody('gpt-4o-mini') }] : []),
  { name: 'node floor', url: nodeFloor.url, path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: chatBody('gpt-4o-mini') },
  { name: 'gateway (embedded)', url: gw.url, path: '/v1/chat/completions', headers: auth(gw.key), body: chatBody('bench-openai'), pid: gw.pid },
  { name: 'gateway cross-format', url: gw.url, path: '/v1/chat/completions', headers: auth(gw.key), body: chatBody('bench-anthropic'), pid: gw.pid },
  ...(gwShared ? [{ name: 'gateway (PostgreSQL+Redis)', url: gwShared.url, path: '/v1/chat/completions', headers: auth(gwShared.key), body: chatBody('bench-openai'), pid: gwShared.pid }] : []),
  ...(portkey
    ? [{ name: 'portkey', url: portkey.url, path: '/v1/chat/completions', headers: { 'content-type': 'application/json', authorization: 'Bearer bench', 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${jsonUrl}/v1` }, body: chatBody('gpt-4o-mini') }]
    : []),
];
results.contenders = targets.map((t) => t.name);

// Every contender must answer correctly before it is measured.
for (const t of targets) {
  const res = await request(t.url + t.path, { method: 'POST', headers: t.headers, body: t.body });
  const text = await res.body.text();
  if (res.statusCode !== 200 || !text.includes('Hello')) throw new Error(`${t.name} answered ${res.statusCode}: ${text.slice(0, 200)}`);
}

// ---- overhead: one connection, sequential, interleaved rounds ------------------------------------
async function overhead() {
  const rounds = quick ? 2 : 7;
  const perRound = quick ? 30 : 300;
  const clients = new Map(targets.map((t) => [t.name, new Client(t.url, { pipelining: 1, keepAliveTimeout: 60_000 })]));
  const perTarget = new Map<string, number[]>(targets.map((t) => [t.name, []]));
  for (let r = 0; r < rounds; r++) {
    for (const t of targets) {
      const c = clients.get(t.name)!;
      const lat: number[] = [];
      for (let i = 0; i < perRound; i++) {
        const start = performance.now();
        const res = await c.request({ path: t.path, method: 'POST', headers: t.headers, body: t.body });
        await res.body.dump();
        lat.push(performance.now() - start);
      }
      perTarget.get(t.name)!.push(median(lat.slice(Math.floor(perRound / 10))));
    }
  }
  const direct = perTarget.get('direct (mock)')!;
  const rows = targets.map((t) => {
    const meds = perTarget.get(t.name)!;
    const over = median(meds.map((m, i) => m - direct[i]!));
    return { name: t.name, median_ms: median(meds), overhead_ms: over };
  });
  for (const c of clients.values()) await c.close();
  table(`overhead — 1 connection, ${rounds} interleaved rounds × ${perRound} requests (median of round medians)`, ['contender', 'median ms', 'overhead ms'], rows.map((r) => [r.name, fmt(r.median_ms, 3), fmt(r.overhead_ms, 3)]));
  results.overhead = rows;
}

// ---- throughput: wrk, 50 connections ----------------------------------------------------------------
const wrk = async (a: string[]) => (await promisify(execFile)('wrk', a, { encoding: 'utf8' })).stdout;
async function throughput() {
  if (!hasBinary('wrk')) {
    console.log('\nthroughput: skipped (wrk is not installed: apt-get install wrk)');
    return;
  }
  // Interleaved rounds, the median kept: on a shared machine one contender's 10 s can fall into
  // a slow patch that the others never see.
  const rounds = quick ? 1 : 3;
  const seconds = quick ? 2 : 5;
  const conns = quick ? 10 : 50;
  const scripts = new Map(targets.map((t, i) => [t.name, writeWrkScript(path.join(tmpdir(), `mg-bench-${process.pid}-${i}.lua`), t.body, t.headers)]));
  type Run = { rps: number; p50_ms: number; p99_ms: number; errors: number };
  const runs = new Map<string, Run[]>(targets.map((t) => [t.name, []]));
  // Asynchronously: the SSE mock runs in this process and must keep serving.
  for (const t of targets) await wrk(['-t2', `-c${conns}`, '-d1s', '-s', scripts.get(t.name)!, t.url + t.path]);
  for (let r = 0; r < rounds; r++) {
    for (const t of targets) {
      const out = await wrk(['-t2', `-c${conns}`, `-d${seconds}s`, '--latency', '-s', scripts.get(t.name)!, t.url + t.path]);
      const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? NaN);
      const ms = (re: RegExp) => {
        const m = re.exec(out);
        if (!m) return NaN;
        const v = Number(m[1]);
        return m[2] === 'us' ? v / 1000 : m[2] === 's' ? v * 1000 : v;
      };
      runs.get(t.name)!.push({ rps: num(/Requests\/sec:\s+([\d.]+)/), p50_ms: ms(/50%\s+([\d.]+)(us|ms|s)/), p99_ms: ms(/99%\s+([\d.]+)(us|ms|s)/), errors: num(/Non-2xx or 3xx responses: (\d+)/) || 0 });
    }
  }
  const rows = targets.map((t) => {
    const rs = runs.get(t.name)!;
    return { name: t.name, rps: median(rs.map((x) => x.rps)), p50_ms: median(rs.map((x) => x.p50_ms)), p99_ms: median(rs.map((x) => x.p99_ms)), errors: rs.reduce((a, x) => a + x.errors, 0), rounds_rps: rs.map((x) => Math.round(x.rps)) };
  });
  table(
    `throughput — wrk ${conns} connections, ${rounds} interleaved round(s) of ${seconds} s after a 1 s warm-up (median)`,
    ['contender', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'rounds req/s'],
    rows.map((r) => [r.name, fmt(r.rps, 0), fmt(r.p50_ms), fmt(r.p99_ms), r.errors, r.rounds_rps.join(' / ')]),
  );
  results.throughput = rows;
}

// ---- streams: many concurrent SSE streams through the gateway ----------------------------------------
const rssMb = (pid: number) => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
  } catch {
    return NaN;
  }
};

async function streams() {
  const n = quick ? 50 : 2000;
  const rounds = quick ? 1 : 3;
  const agent = new Agent({ connections: n + 10, pipelining: 1 });
  const rows = [];
  for (let r = 0; r < rounds; r++) {
    const before = rssMb(gw.pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(gw.pid))), 50);
    const started = performance.now();
    const ttfb: number[] = [];
    const done: number[] = [];
    let ok = 0;
    await Promise.all(
      Array.from({ length: n }, async () => {
        const t0 = performance.now();
        try {
          const res = await request(`${gw.url}/v1/chat/completions`, { method: 'POST', dispatcher: agent, headers: auth(gw.key), body: chatBody('bench-stream', true) });
          let first = true;
          let tail = '';
          for await (const chunk of res.body) {
            if (first) {
              ttfb.push(performance.now() - t0);
              first = false;
            }
            tail = (tail + chunk.toString()).slice(-64);
          }
          if (tail.includes('[DONE]')) ok++;
          done.push(performance.now() - t0);
        } catch {
          done.push(performance.now() - t0);
        }
      }),
    );
    const total = performance.now() - started;
    clearInterval(sampler);
    // "After" is read once the gateway has been idle for a few seconds: its idle collector
    // (server/runtime/idle-gc.ts) returns the burst's garbage within ~4 s of the load ending.
    await new Promise((res) => setTimeout(res, quick ? 2000 : 6000));
    const after = rssMb(gw.pid);
    rows.push({ round: r + 1, streams: n, completed: ok, ttfb_p50_ms: pct(ttfb, 50), ttfb_p99_ms: pct(ttfb, 99), complete_p50_ms: pct(done, 50), total_ms: total, rss_before_mb: before, rss_peak_mb: peak, rss_after_mb: after });
  }
  await agent.close();
  table(
    `streams — ${n} concurrent SSE streams of ${quick ? 20 : 200} chunks through the gateway (embedded)`,
    ['round', 'completed', 'TTFB p50', 'TTFB p99', 'done p50', 'total ms', 'RSS before', 'RSS peak', 'RSS after'],
    rows.map((r) => [r.round, `${r.completed}/${r.streams}`, fmt(r.ttfb_p50_ms, 1), fmt(r.ttfb_p99_ms, 1), fmt(r.complete_p50_ms, 1), fmt(r.total_ms, 0), fmt(r.rss_before_mb, 0), fmt(r.rss_peak_mb, 0), fmt(r.rss_after_mb, 0)]),
  );
  results.streams = rows;
}

try {
  if (scenario === 'overhead' || scenario === 'all') await overhead();
  if (scenario === 'throughput' || scenario === 'all') await throughput();
  if (scenario === 'streams' || scenario === 'all') await streams();
  if (!['overhead', 'throughput', 'streams', 'all'].includes(scenario)) throw new Error(`unknown scenario ${scenario}: overhead, throughput, streams, all or workers`);
  const file = save(scenario);
  console.log(`\nresults: ${path.relative(process.cwd(), file)}${useNginx ? '' : ' (nginx not installed: the mock is Node, no nginx floor)'}`);
} finally {
  await Promise.all([gw.close(), gwShared?.close(), nodeFloor.close(), sse.close()]);
  mockJson?.close();
  nginxFloor?.close();
  portkey?.close();
}
