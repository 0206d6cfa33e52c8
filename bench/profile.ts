// `npm run bench:profile -- [same|cross|stream|redis] [seconds] [--no-profile] [--connections N]`: the gateway alone under wrk with
// --cpu-prof, then the busy time split by package/file and by function (idle left out).
// What the published "where the time goes" section is made from.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { chatBody, startGateway, writeWrkScript } from './contenders.ts';
import { hasBinary, startNginx, startNodeMock } from './mocks.ts';
import { spawnNodeFloor } from './node-floor.ts';
import { threadsCpuMs } from './proc-cpu.ts';

const profile = !process.argv.includes('--no-profile');
const connAt = process.argv.indexOf('--connections');
const connections = connAt > 0 ? Number(process.argv[connAt + 1]) : undefined;
const [kind = 'same', secondsArg = '10'] = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && all[i - 1] !== '--connections');
const model = { same: 'bench-openai', cross: 'bench-anthropic', stream: 'bench-stream', redis: 'bench-openai', floor: 'gpt-4o-mini' }[kind];
if (!model) throw new Error('usage: bench:profile [same|cross|stream|redis|floor] [seconds] [--no-profile]');
const dir = mkdtempSync(path.join(tmpdir(), 'mg-profile-'));
if (profile) process.env.BENCH_GATEWAY_NODE_ARGS = `--cpu-prof --cpu-prof-dir=${dir}`;

const sse = await startNodeMock(200);
const nginx = hasBinary('nginx') ? await startNginx() : null;
const upstream = nginx?.url ?? sse.url;
const gw = kind === 'floor' ? await spawnNodeFloor(upstream).then((f) => ({ ...f, key: 'none' })) : await startGateway({ json: upstream, sse: sse.url, ...(kind === 'redis' ? { postgres: true, redisUrl: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379' } : {}) });
const script = writeWrkScript(path.join(dir, 'wrk.lua'), chatBody(model, kind === 'stream'), { 'content-type': 'application/json', authorization: `Bearer ${gw.key}` });
// CPU time per request (all the gateway's threads, from /proc) varies far less than req/s on a
// shared machine: the number to compare between changes.
const threadCpuMs = () => {
  const byThread = new Map<string, number>();
  for (const [tid, { name, ms }] of threadsCpuMs(gw.pid)) {
    // Threads other than the main one are summed by name (V8 helpers, the database thread: all "node").
    const label = tid === String(gw.pid) ? 'main' : name;
    byThread.set(label, (byThread.get(label) ?? 0) + ms);
  }
  return byThread;
};
const threadsBefore = threadCpuMs();
const out = (await promisify(execFile)('wrk', ['-t2', `-c${connections ?? (kind === 'stream' ? 20 : 50)}`, `-d${secondsArg}s`, '-s', script, `${gw.url}/v1/chat/completions`])).stdout;
const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
const perRequest = [...threadCpuMs()].map(([name, ms]) => [name, (1000 * (ms - (threadsBefore.get(name) ?? 0))) / requests] as const);
const total = perRequest.reduce((a, [, us]) => a + us, 0);
const threads = perRequest.filter(([, us]) => us >= 0.5).map(([name, us]) => `${name} ${us.toFixed(0)}`);
console.log(`${/Requests\/sec:\s+[\d.]+/.exec(out)?.[0]}; gateway CPU ${total.toFixed(0)} µs per request (${threads.join(', ')})`);
await gw.close();
await sse.close();
nginx?.close();

if (!profile) process.exit(0);

type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number } };
const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))!;
const prof = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
const nodes = new Map(prof.nodes.map((n) => [n.id, n]));
const byFile = new Map<string, number>();
const byFn = new Map<string, number>();
let busy = 0;
prof.samples.forEach((id, i) => {
  const f = nodes.get(id)!.callFrame;
  if (f.functionName === '(idle)') return;
  const t = prof.timeDeltas[i] ?? 0;
  busy += t;
  const where = f.url.replace(/^file:\/\/.*?\/node_modules\/((@[^/]+\/)?[^/]+)\/.*/, 'npm:$1').replace(/^file:\/\/.*\//, '').replace(/^wasm:.*/, 'wasm (llhttp; Prisma)') || `(${f.functionName})`;
  byFile.set(where, (byFile.get(where) ?? 0) + t);
  const fn = `${f.functionName || '(anonymous)'} ${f.url.split('/').pop()}:${f.lineNumber + 1}`;
  byFn.set(fn, (byFn.get(fn) ?? 0) + t);
});
const top = (m: Map<string, number>, n: number) =>
  [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `${((100 * v) / busy).toFixed(1).padStart(5)} %  ${k}`).join('\n');
console.log(`\nbusy ${(busy / 1e6).toFixed(1)} s of the main thread — by package or file:\n${top(byFile, 20)}\n\nby function:\n${top(byFn, 30)}\n\nprofile: ${path.join(dir, file)}`);
