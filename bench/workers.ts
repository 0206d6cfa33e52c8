// npm run bench -- workers [--quick] [--workers N]
// Throughput with 1 and with N worker processes (`serve --workers N`, decision 0029), beside the
// node floor (bench/node-floor.ts) run as 1 and as N processes on one port the same way: how much
// of the floor's scaling the gateway keeps. The gateways run on PostgreSQL + Redis (what more than
// one worker needs). wrk, the mock and every contender share this machine's cores: the figures are
// ratios within one run, and noisy; CPU per request (every process of the contender, its primary
// included) is the steadier one.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { chatBody, startGateway, writeWrkScript } from './contenders.ts';
import { hasBinary, startNginx, startNodeMock } from './mocks.ts';
import { spawnNodeFloor } from './node-floor.ts';
import { treeCpuMs as cpuMs } from './proc-cpu.ts';

type Row = { name: string; workers: number; rps: number; cpu_us: number; p50_ms: number; p99_ms: number; errors: number; rounds_rps: number[] };

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)]! : NaN;
};

export async function workersBench(o: { quick: boolean; workers?: number; table: (title: string, header: string[], rows: (string | number)[][]) => void }): Promise<{ workers: number; rows: Row[] } | null> {
  if (!hasBinary('wrk')) {
    console.log('\nworkers: skipped (wrk is not installed: apt-get install wrk)');
    return null;
  }
  const n = o.workers ?? Math.max(2, availableParallelism());
  const rounds = o.quick ? 1 : 3;
  const seconds = o.quick ? 2 : 5;
  const conns = o.quick ? 10 : 50;
  const useNginx = hasBinary('nginx');
  const sse = useNginx ? null : await startNodeMock(20);
  const mock = useNginx ? await startNginx() : null;
  const jsonUrl = mock?.url ?? sse!.url;
  const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const [floor1, floorN, gw1, gwN] = await Promise.all([
    spawnNodeFloor(jsonUrl, 1),
    spawnNodeFloor(jsonUrl, n),
    startGateway({ json: jsonUrl, sse: jsonUrl, postgres: true, redisUrl, workers: 1 }),
    startGateway({ json: jsonUrl, sse: jsonUrl, postgres: true, redisUrl, workers: n }),
  ]);
  const json = { 'content-type': 'application/json' };
  const targets = [
    { name: 'node floor', workers: 1, pid: floor1.pid, url: floor1.url, headers: json, body: chatBody('gpt-4o-mini') },
    { name: 'node floor', workers: n, pid: floorN.pid, url: floorN.url, headers: json, body: chatBody('gpt-4o-mini') },
    { name: 'gateway (PostgreSQL+Redis)', workers: 1, pid: gw1.pid, url: gw1.url, headers: { ...json, authorization: `Bearer ${gw1.key}` }, body: chatBody('bench-openai') },
    { name: 'gateway (PostgreSQL+Redis)', workers: n, pid: gwN.pid, url: gwN.url, headers: { ...json, authorization: `Bearer ${gwN.key}` }, body: chatBody('bench-openai') },
  ];
  try {
    for (const t of targets) {
      const res = await request(`${t.url}/v1/chat/completions`, { method: 'POST', headers: t.headers, body: t.body });
      const text = await res.body.text();
      if (res.statusCode !== 200 || !text.includes('Hello')) throw new Error(`${t.name} ×${t.workers} answered ${res.statusCode}: ${text.slice(0, 200)}`);
    }
    const wrk = async (args: string[]) => (await promisify(execFile)('wrk', args, { encoding: 'utf8' })).stdout;
    const scripts = targets.map((t, i) => writeWrkScript(path.join(tmpdir(), `mg-bench-workers-${process.pid}-${i}.lua`), t.body, t.headers));
    // One wrk thread: on a machine of few cores, every core wrk takes is one the workers lack.
    for (const [i, t] of targets.entries()) await wrk(['-t1', `-c${conns}`, '-d1s', '-s', scripts[i]!, `${t.url}/v1/chat/completions`]);
    const runs = targets.map(() => [] as { rps: number; cpuUs: number; p50: number; p99: number; errors: number }[]);
    for (let r = 0; r < rounds; r++) {
      for (const [i, t] of targets.entries()) {
        const cpuBefore = cpuMs(t.pid);
        const out = await wrk(['-t1', `-c${conns}`, `-d${seconds}s`, '--latency', '-s', scripts[i]!, `${t.url}/v1/chat/completions`]);
        const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN);
        const cpuUs = ((cpuMs(t.pid) - cpuBefore) * 1000) / requests;
        const ms = (re: RegExp) => {
          const m = re.exec(out);
          if (!m) return NaN;
          const v = Number(m[1]);
          return m[2] === 'us' ? v / 1000 : m[2] === 's' ? v * 1000 : v;
        };
        runs[i]!.push({ rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN), cpuUs, p50: ms(/50%\s+([\d.]+)(us|ms|s)/), p99: ms(/99%\s+([\d.]+)(us|ms|s)/), errors: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0) });
      }
    }
    const rows: Row[] = targets.map((t, i) => {
      const rs = runs[i]!;
      return { name: t.name, workers: t.workers, rps: median(rs.map((x) => x.rps)), cpu_us: median(rs.map((x) => x.cpuUs)), p50_ms: median(rs.map((x) => x.p50)), p99_ms: median(rs.map((x) => x.p99)), errors: rs.reduce((a, x) => a + x.errors, 0), rounds_rps: rs.map((x) => Math.round(x.rps)) };
    });
    const single = (name: string) => rows.find((r) => r.name === name && r.workers === 1)!.rps;
    o.table(
      `workers — wrk -t1, ${conns} connections, ${rounds} interleaved round(s) of ${seconds} s after a 1 s warm-up (median); ${availableParallelism()} cores shared with wrk and the mock`,
      ['contender', 'workers', 'req/s', '× 1 worker', 'CPU µs/req', 'p50 ms', 'p99 ms', 'non-2xx', 'rounds req/s'],
      rows.map((r) => [r.name, r.workers, r.rps.toFixed(0), `${(r.rps / single(r.name)).toFixed(2)}×`, r.cpu_us.toFixed(0), r.p50_ms.toFixed(2), r.p99_ms.toFixed(2), r.errors, r.rounds_rps.join(' / ')]),
    );
    return { workers: n, rows };
  } finally {
    await Promise.all([gw1.close(), gwN.close(), floor1.close(), floorN.close(), sse?.close()]);
    mock?.close();
  }
}
