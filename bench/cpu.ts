// npm run bench -- cpu [--against <git ref>]… [--rounds N] [--seconds S] [--store embedded|shared|both] [--quick]
// CPU per request of builds side by side: this checkout and, with --against, another commit built
// in a temporary worktree, each started alone in turn (never two at once), on the embedded
// database and on PostgreSQL + Redis, driven by wrk with the same requests (same-format,
// cross-format, a stream), beside the node floor. Rounds interleave the contenders (their order
// reversed every other round) and the medians are kept: a step of 10 % that latency medians cannot
// see shows here. Method and figures: docs/benchmarks.md.
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { request } from 'undici';
import { buildRef, thisBuild, type Build } from './build-ref.ts';
import { chatBody, startGateway, writeWrkScript } from './contenders.ts';
import { hasBinary, startNginx, startNodeMock } from './mocks.ts';
import { spawnNodeFloor } from './node-floor.ts';
import { commandCpuMs, GcTrace, threadCpuMs, treeCpuMs } from './proc-cpu.ts';

type Store = 'embedded' | 'shared';
type Scenario = { name: string; model: string; stream: boolean };
const SCENARIOS: Scenario[] = [
  { name: 'same-format', model: 'bench-openai', stream: false },
  { name: 'cross-format', model: 'bench-anthropic', stream: false },
  { name: 'stream', model: 'bench-stream', stream: true },
];
const CONNECTIONS = 4;

export type Sample = { cpu_us: number; main_us: number; alloc_kb: number; postgres_us?: number; redis_us?: number; rps: number; non_2xx: number };
export type CpuRow = { store: Store | 'any'; scenario: string; contender: string; rounds: Sample[]; cpu_us: number; main_us: number; alloc_kb: number; x_floor: number; vs_first?: number; postgres_us?: number; redis_us?: number };

const median = (xs: number[]) => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2) : NaN;
};
const wrk = async (args: string[]) => (await promisify(execFile)('wrk', args, { encoding: 'utf8' })).stdout;

export async function cpuBench(o: {
  quick: boolean;
  /** Other builds (git refs), each in a worktree of its own; the first is what the others are compared with. */
  against?: string[];
  rounds?: number;
  seconds?: number;
  stores?: Store[];
  table: (title: string, header: string[], rows: (string | number)[][]) => void;
}): Promise<{ builds: string[]; rows: CpuRow[] } | null> {
  if (!hasBinary('wrk')) {
    console.log('\ncpu: skipped (wrk is not installed: apt-get install wrk)');
    return null;
  }
  const rounds = o.rounds ?? (o.quick ? 1 : 5);
  const seconds = o.seconds ?? (o.quick ? 1 : 6);
  const warm = o.quick ? 1 : 2;
  const stores = o.stores ?? ['embedded', 'shared'];
  const builds: Build[] = [];
  try {
    for (const ref of o.against ?? []) {
      console.log(`building ${ref} in a temporary worktree…`);
      builds.push(buildRef(ref));
    }
  } catch (err) {
    for (const b of builds) b.remove();
    throw err;
  }
  builds.push(thisBuild());

  const sse = await startNodeMock(o.quick ? 20 : 200);
  const nginx = hasBinary('nginx') ? await startNginx() : null;
  const json = nginx?.url ?? sse.url;
  const scripts = new Map<string, string>();
  const script = (key: string, body: string) => {
    const id = `${key} ${body}`;
    if (!scripts.has(id)) scripts.set(id, writeWrkScript(path.join(tmpdir(), `mg-bench-cpu-${process.pid}-${scripts.size}.lua`), body, { 'content-type': 'application/json', authorization: `Bearer ${key}` }));
    return scripts.get(id)!;
  };
  const samples = new Map<string, Sample[]>();
  const put = (key: string, s: Sample) => samples.set(key, [...(samples.get(key) ?? []), s]);

  /** One contender (already started, checked and warmed) under wrk for `seconds`, alone. */
  async function measure(pid: number, url: string, wrkScript: string, gc: GcTrace, withServers: boolean): Promise<Sample> {
    const cpu0 = treeCpuMs(pid);
    const main0 = threadCpuMs(pid);
    const gc0 = gc.allocatedMb;
    const pg0 = withServers ? commandCpuMs('postgres') : 0;
    const redis0 = withServers ? commandCpuMs('redis-server') : 0;
    const out = await wrk(['-t2', `-c${CONNECTIONS}`, `-d${seconds}s`, '-s', wrkScript, `${url}/v1/chat/completions`]);
    const cpu = treeCpuMs(pid) - cpu0;
    const main = threadCpuMs(pid) - main0;
    const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
    return {
      cpu_us: (1000 * cpu) / requests,
      main_us: (1000 * main) / requests,
      alloc_kb: ((gc.allocatedMb - gc0) * 1024) / requests,
      ...(withServers ? { postgres_us: (1000 * (commandCpuMs('postgres') - pg0)) / requests, redis_us: (1000 * (commandCpuMs('redis-server') - redis0)) / requests } : {}),
      rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]),
      non_2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
    };
  }

  async function check(url: string, key: string, s: Scenario) {
    const res = await request(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: chatBody(s.model, s.stream) });
    const text = await res.body.text();
    if (res.statusCode !== 200 || !(s.stream ? text.includes('[DONE]') : text.includes('Hello'))) throw new Error(`${s.name} answered ${res.statusCode}: ${text.slice(0, 300)}`);
  }

  async function runFloor() {
    for (const s of SCENARIOS.filter((x) => x.name !== 'cross-format')) {
      const gc = new GcTrace();
      const floor = await spawnNodeFloor(s.stream ? sse.url : json, 1, { nodeArgs: ['--trace-gc'], onStdout: (d) => gc.feed(d) });
      try {
        await check(floor.url, 'none', { ...s, model: 'gpt-4o-mini' });
        const wrkScript = script('none', chatBody('gpt-4o-mini', s.stream));
        await wrk(['-t2', `-c${CONNECTIONS}`, `-d${warm}s`, '-s', wrkScript, `${floor.url}/v1/chat/completions`]);
        put(`any|${s.name}|node floor`, await measure(floor.pid, floor.url, wrkScript, gc, false));
      } finally {
        await floor.close();
      }
    }
  }

  async function runBuild(b: Build, store: Store) {
    const gc = new GcTrace();
    const gw = await startGateway({
      json,
      sse: sse.url,
      bin: b.bin,
      nodeArgs: ['--trace-gc'],
      onStdout: (d) => gc.feed(d),
      ...(store === 'shared' ? { postgres: true, redisUrl: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379' } : {}),
    });
    try {
      // Every scenario warmed up before any is measured (V8 optimises the paths they share), and
      // each again just before its window: the first measured is not the one that paid for the JIT.
      for (const s of SCENARIOS) {
        await check(gw.url, gw.key, s);
        await wrk(['-t2', `-c${CONNECTIONS}`, `-d${warm}s`, '-s', script(gw.key, chatBody(s.model, s.stream)), `${gw.url}/v1/chat/completions`]);
      }
      for (const s of SCENARIOS) {
        const wrkScript = script(gw.key, chatBody(s.model, s.stream));
        await wrk(['-t2', `-c${CONNECTIONS}`, '-d1s', '-s', wrkScript, `${gw.url}/v1/chat/completions`]);
        put(`${store}|${s.name}|${b.label}`, await measure(gw.pid, gw.url, wrkScript, gc, store === 'shared'));
      }
    } finally {
      await gw.close();
    }
  }

  const available = new Set<Store>(stores);
  try {
    const contenders: (Build | 'floor')[] = ['floor', ...builds];
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 ? [...contenders].reverse() : contenders;
      process.stdout.write(`round ${r + 1}/${rounds}:`);
      for (const c of order) {
        if (c === 'floor') {
          await runFloor();
          process.stdout.write(' floor');
          continue;
        }
        for (const store of stores) {
          if (!available.has(store)) continue;
          try {
            await runBuild(c, store);
            process.stdout.write(` ${c.label}/${store}`);
          } catch (err) {
            // PostgreSQL or Redis down: the embedded figures still stand.
            if (store !== 'shared') throw err;
            console.log(`\n(PostgreSQL + Redis unavailable: ${(err as Error).message.slice(0, 300)})`);
            available.delete(store);
          }
        }
      }
      process.stdout.write('\n');
    }
  } finally {
    for (const b of builds) b.remove();
    await sse.close();
    nginx?.close();
  }

  // Tables: one per store, the floor first, then the builds in the order given; "vs first" is the
  // median over rounds of each build's ratio to the first build in the same round.
  const rows: CpuRow[] = [];
  for (const store of stores.filter((s) => available.has(s))) {
    const table: (string | number)[][] = [];
    for (const s of SCENARIOS) {
      const floor = samples.get(`any|${s.name === 'cross-format' ? 'same-format' : s.name}|node floor`) ?? [];
      const floorUs = median(floor.map((x) => x.cpu_us));
      const first = samples.get(`${store}|${s.name}|${builds[0]!.label}`) ?? [];
      const entries: [string, Sample[]][] = [['node floor', floor], ...builds.map((b) => [b.label, samples.get(`${store}|${s.name}|${b.label}`) ?? []] as [string, Sample[]])];
      for (const [contender, xs] of entries) {
        const cpu = median(xs.map((x) => x.cpu_us));
        const vsFirst = builds.length > 1 && contender !== builds[0]!.label && contender !== 'node floor' ? median(xs.map((x, i) => x.cpu_us / (first[i]?.cpu_us ?? NaN) - 1)) : undefined;
        const row: CpuRow = {
          store: contender === 'node floor' ? 'any' : store,
          scenario: s.name,
          contender,
          rounds: xs,
          cpu_us: cpu,
          main_us: median(xs.map((x) => x.main_us)),
          alloc_kb: median(xs.map((x) => x.alloc_kb)),
          x_floor: cpu / floorUs,
          ...(vsFirst !== undefined ? { vs_first: vsFirst } : {}),
          ...(store === 'shared' && contender !== 'node floor' ? { postgres_us: median(xs.map((x) => x.postgres_us!)), redis_us: median(xs.map((x) => x.redis_us!)) } : {}),
        };
        rows.push(row);
        const errors = xs.reduce((a, x) => a + x.non_2xx, 0);
        table.push([
          s.name,
          contender,
          row.cpu_us.toFixed(0),
          row.main_us.toFixed(0),
          row.x_floor.toFixed(2),
          row.vs_first !== undefined ? `${row.vs_first >= 0 ? '+' : ''}${(100 * row.vs_first).toFixed(1)} %` : '',
          row.alloc_kb.toFixed(1),
          ...(store === 'shared' ? [row.postgres_us?.toFixed(0) ?? '', row.redis_us?.toFixed(0) ?? ''] : []),
          xs.map((x) => x.cpu_us.toFixed(0)).join(' ') + (errors ? ` (${errors} non-2xx!)` : ''),
        ]);
      }
    }
    o.table(
      `CPU per request — ${store === 'embedded' ? 'embedded database' : 'PostgreSQL + Redis'} (wrk -c${CONNECTIONS}, ${rounds} round(s) × ${seconds} s after ${warm} s of warm-up; medians)`,
      ['scenario', 'contender', 'CPU µs', 'main thread', '× floor', builds.length > 1 ? `vs ${builds[0]!.label}` : '', 'alloc KB', ...(store === 'shared' ? ['postgres µs', 'redis µs'] : []), 'rounds (µs)'],
      table,
    );
  }
  return { builds: builds.map((b) => b.label), rows };
}
