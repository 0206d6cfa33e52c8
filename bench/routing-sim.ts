// npm run bench:routing -- [--quick]
//
// The routing strategies under the same simulated traffic (issue 35). Three fake OpenAI-compatible
// upstreams (bench/routing-upstreams.ts) serve one model: A (2 keys, each with a request limit per
// minute at the fake that the gateway is told of), B (the fastest; dies part-way through the run and
// answers 503 from then on) and C (slow, reliable). Multi-turn conversations sharing a long system
// prompt (past routing.affinity_min_tokens, so cache affinity applies) go through a gateway started
// anew for each strategy (embedded database, no Redis), with the same seeded traffic each time; then
// weighted and least-latency once more with cache_affinity: false (least-latency not in --quick).
// Prints the tables and writes the figures to bench/results/ (JSON, not committed). Not a test: it
// asserts nothing. Full: ~2 min; --quick (CI's smoke run): ~30 s.
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { openDatabase } from '../server/db/client.ts';
import { ENGINE_FLAGS } from '../test/helpers/engine-flags.ts';
import { prng, startUpstreams, type FakeUpstream, type UpstreamSpec } from './routing-upstreams.ts';

const quick = process.argv.includes('--quick');
const SEED = 35;

// ---- the scenario ------------------------------------------------------------------------------
const S = quick
  ? { conversations: 10, turns: 5, concurrency: 8, thinkMs: [100, 300], staggerMs: 300, bDiesAtMs: 700, rpm: 10 }
  : { conversations: 40, turns: 10, concurrency: 8, thinkMs: [300, 900], staggerMs: 3_000, bDiesAtMs: 6_000, rpm: 100 };
const SYSTEM_TOKENS = 1_600;

// --quick halves every latency, to keep its smoke run short.
const L = quick ? 0.5 : 1;
const UPSTREAMS: UpstreamSpec[] = [
  { name: 'A', latencyMs: 120 * L, jitterMs: 80 * L, requestsPerMinute: S.rpm, seed: SEED + 1 },
  { name: 'B', latencyMs: 40 * L, jitterMs: 30 * L, diesAtMs: S.bDiesAtMs, deathMode: '503', seed: SEED + 2 },
  { name: 'C', latencyMs: 400 * L, jitterMs: 200 * L, seed: SEED + 3 },
];

type Run = { name: string; strategy: string; affinity: boolean };
const RUNS: Run[] = [
  { name: 'failover', strategy: 'failover', affinity: true },
  { name: 'weighted', strategy: 'weighted', affinity: true },
  { name: 'least-latency', strategy: 'least-latency', affinity: true },
  { name: 'least-busy', strategy: 'least-busy', affinity: true },
  { name: 'weighted, no affinity', strategy: 'weighted', affinity: false },
  // Under affinity least-latency and least-busy keep each prefix where rendezvous hashing puts it
  // (router.ts plan()): this run shows what least-latency does on its own (not in --quick).
  ...(quick ? [] : [{ name: 'least-latency, no affinity', strategy: 'least-latency', affinity: false }]),
];

function config(run: Run, [a, b, c]: FakeUpstream[]): string {
  return `providers:
  - id: prov-a
    type: openai
    base_url: "${a!.url}/v1"
    api_keys:
      - { key: sk-sim-a-one, alias: one, requests_per_minute: ${S.rpm} }
      - { key: sk-sim-a-two, alias: two, requests_per_minute: ${S.rpm} }
  - { id: prov-b, type: openai, base_url: "${b!.url}/v1", api_key: sk-sim-b }
  - { id: prov-c, type: openai, base_url: "${c!.url}/v1", api_key: sk-sim-c }
models:
  - id: sim
    endpoint: chat
    strategy: ${run.strategy}
    cache_affinity: ${run.affinity}
    upstreams:
      - { provider: prov-a, model: fake-a, weight: 2 }
      - { provider: prov-b, model: fake-b, weight: 2 }
      - { provider: prov-c, model: fake-c, weight: 1 }
plans:
  - { id: bench, rank: 0, daily_tokens: 1000000000000, requests_per_minute: 100000000, max_concurrent_jobs: 10 }
routing:
  circuit_breaker: { consecutive_failures: 5, cooldown_seconds: ${quick ? 2 : 5}, max_cooldown_seconds: 60 }
`;
}

// ---- the traffic: the same for every run ---------------------------------------------------------
const WORDS = 'gateway route upstream cache prefix token latency model provider request answer stream budget ledger quota key pool breaker probe window affinity'.split(' ');
function prose(random: () => number, chars: number): string {
  let s = '';
  while (s.length < chars) s += WORDS[Math.floor(random() * WORDS.length)] + (random() < 0.1 ? '. ' : ' ');
  return s.slice(0, chars);
}
type Message = { role: 'system' | 'user' | 'assistant'; content: string };
type Conversation = { id: number; messages: Message[]; users: string[]; assistants: string[]; thinks: number[]; startAt: number };

function traffic(): Conversation[] {
  const random = prng(SEED);
  const system = `You are the support assistant of a model gateway. ${prose(random, SYSTEM_TOKENS * 4)}`;
  return Array.from({ length: S.conversations }, (_, id) => ({
    id,
    messages: [{ role: 'system', content: system }],
    users: Array.from({ length: S.turns }, (_, t) => `Conversation ${id}, question ${t + 1}: ${prose(random, t === 0 ? 200 + Math.floor(random() * 400) : 40 + Math.floor(random() * 300))}?`),
    assistants: Array.from({ length: S.turns }, () => prose(random, 80 + Math.floor(random() * 400))),
    thinks: Array.from({ length: S.turns }, () => S.thinkMs[0]! + random() * (S.thinkMs[1]! - S.thinkMs[0]!)),
    startAt: random() * S.staggerMs,
  }));
}

// ---- one run -------------------------------------------------------------------------------------
type Sample = { ms: number; status: number; upstream: string | null; prompt: number; cached: number; at: number };

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))]! : NaN;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function drive(url: string, key: string): Promise<{ samples: Sample[]; ms: number }> {
  const convs = traffic();
  const agent = new Agent({ connections: S.concurrency * 2, keepAliveTimeout: 10_000 });
  const samples: Sample[] = [];
  const t0 = performance.now();
  // Each conversation is ready at its start, then after each answer and its think time; the
  // workers take the one that has been ready longest.
  const state = convs.map((c) => ({ c, turn: 0, readyAt: t0 + c.startAt, busy: false }));
  const worker = async () => {
    for (;;) {
      const open = state.filter((s) => !s.busy && s.turn < S.turns);
      if (!open.length) {
        if (state.every((s) => s.turn >= S.turns)) return;
        await sleep(5);
        continue;
      }
      const next = open.reduce((a, b) => (b.readyAt < a.readyAt ? b : a));
      const wait = next.readyAt - performance.now();
      if (wait > 0) {
        await sleep(Math.min(wait, 20));
        continue;
      }
      next.busy = true;
      const { c } = next;
      c.messages.push({ role: 'user', content: c.users[next.turn]! });
      const started = performance.now();
      let sample: Sample;
      try {
        const res = await request(`${url}/v1/chat/completions`, {
          method: 'POST',
          dispatcher: agent,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'sim', messages: c.messages, max_tokens: 64 }),
          headersTimeout: 60_000,
          bodyTimeout: 60_000,
        });
        const text = await res.body.text();
        const upstream = res.headers['x-gateway-upstream'];
        let prompt = 0;
        let cached = 0;
        if (res.statusCode === 200) {
          const usage = (JSON.parse(text) as { usage?: { prompt_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } } }).usage;
          prompt = usage?.prompt_tokens ?? 0;
          cached = usage?.prompt_tokens_details?.cached_tokens ?? 0;
        }
        sample = { ms: performance.now() - started, status: res.statusCode, upstream: typeof upstream === 'string' ? upstream : null, prompt, cached, at: started - t0 };
      } catch {
        sample = { ms: performance.now() - started, status: 0, upstream: null, prompt: 0, cached: 0, at: started - t0 };
      }
      samples.push(sample);
      // The client keeps the conversation going whatever the answer: the same traffic in every run.
      c.messages.push({ role: 'assistant', content: c.assistants[next.turn]! });
      next.turn++;
      next.readyAt = performance.now() + c.thinks[next.turn - 1]!;
      next.busy = false;
    }
  };
  await Promise.all(Array.from({ length: S.concurrency }, worker));
  const ms = performance.now() - t0;
  await agent.close();
  return { samples, ms };
}

/** Counters of the gateway's routing metrics (Prometheus text), summed by metric and label values picked. */
async function routingMetrics(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text().catch(() => '');
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^gateway_(routing_skips|circuit_breaker_openings|key_cooldowns)_total\{([^}]*)\} ([0-9.e+]+)$/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...m[2]!.matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    const name = m[1] === 'routing_skips' ? `skip ${labels.key} ${labels.reason}` : m[1] === 'key_cooldowns' ? `cooldown ${labels.key} ${labels.reason}` : `breaker ${labels.provider}`;
    out[name] = (out[name] ?? 0) + Number(m[3]);
  }
  return out;
}

// ---- the gateways ----------------------------------------------------------------------------------
// Each run's gateway is test/helpers/gateway-child.ts (the sources through tsx: it starts the gateway
// with DATA_DIR and GATEWAY_CONFIG, creates a user of the default plan and its key, and prints
// {"url","keys"}), on a copy of one migrated embedded database made once here, as the tests'
// global setup does: ~2 s a start instead of the ~6 s bench/contenders.ts startGateway takes
// creating a database each time (5 runs: the quick mode's 40 s budget).
const root = fileURLToPath(new URL('..', import.meta.url));
const children = new Set<number>();
const killChildren = () => {
  for (const pid of children) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
};
process.on('exit', killChildren);
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => process.exit(130));

type Gateway = { url: string; key: string; pid: number; startMs: number; close(): Promise<void> };

async function startSimGateway(template: string, configText: string): Promise<Gateway> {
  const t0 = performance.now();
  const dir = mkdtempSync(path.join(tmpdir(), 'mg-routing-sim-gw-'));
  cpSync(template, dir, { recursive: true });
  const config = path.join(dir, 'gateway.config.yaml');
  writeFileSync(config, configText);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATA_DIR: dir,
    GATEWAY_CONFIG: config,
    HOST: '127.0.0.1',
    PORT: '0',
    GATEWAY_METADATA_FETCH: 'off',
    GATEWAY_TEST_KEYS: '1',
    GATEWAY_TEST_LOG: process.env.BENCH_GATEWAY_LOG ?? 'silent',
  };
  const child = spawn(process.execPath, [...ENGINE_FLAGS, '--import', 'tsx', path.join(root, 'test/helpers/gateway-child.ts')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child.pid!);
  let log = '';
  child.stderr!.on('data', (d) => (log += d));
  if (process.env.BENCH_GATEWAY_LOG) child.stderr!.pipe(process.stderr);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(t);
    }
    children.delete(child.pid!);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve);
      void exited.then(() => reject(new Error(`the gateway exited: ${log.slice(-2000)}`)));
      setTimeout(() => reject(new Error(`the gateway did not start in 60 s: ${log.slice(-2000)}`)), 60_000).unref();
    });
    const { url, keys } = JSON.parse(line) as { url: string; keys: string[] };
    return { url, key: keys[0]!, pid: child.pid!, startMs: performance.now() - t0, close };
  } catch (err) {
    await close();
    throw err;
  }
}

async function runOne(upstreams: FakeUpstream[], starting: Promise<Gateway>) {
  const gw = await starting;
  const startMs = gw.startMs;
  try {
    // The key, its plan and the config, checked by one request that reaches no upstream.
    const probe = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${gw.key}` } });
    if (!probe.ok) throw new Error(`the gateway refused its key: ${probe.status} ${await probe.text()}`);
    await Promise.all(upstreams.map((u) => u.resetAsync()));
    const { samples, ms } = await drive(gw.url, gw.key);
    const metrics = await routingMetrics(gw.url);
    return { samples, ms, startMs, metrics, fakes: upstreams.map((u) => ({ name: u.spec.name, ...u.stats })) };
  } finally {
    await gw.close();
  }
}

function table(title: string, header: string[], rows: (string | number)[][]) {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const w = header.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  console.log(`\n${title}\n${cells.map((r, j) => r.map((c, i) => (i ? c.padStart(w[i]!) : c.padEnd(w[i]!))).join('  ') + (j === 0 ? `\n${w.map((x) => '-'.repeat(x)).join('  ')}` : '')).join('\n')}`);
}
const share = (n: number, of: number) => (of ? `${((100 * n) / of).toFixed(1)}%` : '—');

// ---- main ----------------------------------------------------------------------------------------
const started = performance.now();
const upstreams = await startUpstreams(UPSTREAMS);
// One migrated embedded database; each gateway starts on a copy of it.
const template = mkdtempSync(path.join(tmpdir(), 'mg-routing-sim-template-'));
const results: Record<string, unknown> = {
  date: new Date().toISOString(),
  quick,
  node: process.version,
  cpus: (await import('node:os')).cpus().length,
  scenario: { ...S, seed: SEED, systemPromptTokens: SYSTEM_TOKENS, upstreams: UPSTREAMS },
  runs: [] as unknown[],
};
const keyLabels = ['prov-a#one', 'prov-a#two', 'prov-b', 'prov-c'];
const rows: (string | number)[][] = [];
const shareRows: (string | number)[][] = [];
try {
  await (await openDatabase({ dataDir: template })).close();
  console.log(
    `routing simulation${quick ? ' (quick)' : ''}: ${S.conversations} conversations × ${S.turns} turns, concurrency ${S.concurrency}, system prompt ~${SYSTEM_TOKENS} tokens; ` +
      `A ${UPSTREAMS[0]!.latencyMs}+${UPSTREAMS[0]!.jitterMs} ms, 2 keys × ${S.rpm} rpm; B ${UPSTREAMS[1]!.latencyMs}+${UPSTREAMS[1]!.jitterMs} ms, dies at ${S.bDiesAtMs / 1000} s; C ${UPSTREAMS[2]!.latencyMs}+${UPSTREAMS[2]!.jitterMs} ms`,
  );
  // --quick starts every run's gateway at once, before any traffic (the starts are most of its
  // time); otherwise each starts when its run comes, so nothing else runs during a measurement.
  const begin = (run: Run) => startSimGateway(template, config(run, upstreams));
  const early = quick ? RUNS.map(begin) : null;
  if (early) await Promise.allSettled(early);
  for (const [i, run] of RUNS.entries()) {
    const r = await runOne(upstreams, early?.[i] ?? begin(run)).catch(async (err) => {
      // The gateways started early for the runs left are closed before the error goes on.
      await Promise.all((early ?? []).slice(i + 1).map((g) => g.then((gw) => gw.close(), () => {})));
      throw err;
    });
    const ok = r.samples.filter((s) => s.status === 200);
    const lat = r.samples.map((s) => s.ms);
    const prompt = ok.reduce((n, s) => n + s.prompt, 0);
    const cached = ok.reduce((n, s) => n + s.cached, 0);
    const by: Record<string, number> = {};
    for (const s of ok) by[s.upstream ?? '?'] = (by[s.upstream ?? '?'] ?? 0) + 1;
    const statuses: Record<string, number> = {};
    for (const s of r.samples) statuses[s.status] = (statuses[s.status] ?? 0) + 1;
    const fake = (n: string) => r.fakes.find((f) => f.name === n)!;
    const summary = {
      run: run.name,
      strategy: run.strategy,
      cache_affinity: run.affinity,
      requests: r.samples.length,
      ok: ok.length,
      success_rate: ok.length / r.samples.length,
      p50_ms: pct(lat, 50),
      p99_ms: pct(lat, 99),
      upstream_429s: r.fakes.reduce((n, f) => n + f.rateLimited429, 0),
      dead_upstream_requests_after_death: fake('B').afterDeath,
      upstream_503s: r.fakes.reduce((n, f) => n + f.failed503, 0),
      upstream_attempts: Object.fromEntries(r.fakes.map((f) => [f.name, f.requests])),
      cache_read_share: prompt ? cached / prompt : 0,
      prompt_tokens: prompt,
      cached_tokens: cached,
      traffic_by_upstream_key: by,
      statuses,
      run_ms: r.ms,
      gateway_start_ms: r.startMs,
      gateway_metrics: r.metrics,
      fakes: r.fakes,
    };
    (results.runs as unknown[]).push(summary);
    rows.push([
      run.name,
      summary.requests,
      share(summary.ok, summary.requests),
      summary.p50_ms.toFixed(0),
      summary.p99_ms.toFixed(0),
      summary.upstream_429s,
      summary.dead_upstream_requests_after_death,
      share(cached, prompt),
      (r.ms / 1000).toFixed(1),
    ]);
    shareRows.push([run.name, ...keyLabels.map((k) => share(by[k] ?? 0, ok.length)), Object.keys(by).some((k) => !keyLabels.includes(k)) ? JSON.stringify(by) : '']);
    const events = Object.entries(r.metrics)
      .map(([k, v]) => `${k}: ${v}`)
      .join(', ');
    console.log(`  ${run.name}: ${summary.requests} requests in ${(r.ms / 1000).toFixed(1)} s (gateway up in ${(r.startMs / 1000).toFixed(1)} s); statuses ${JSON.stringify(statuses)}; attempts at the fakes ${JSON.stringify(summary.upstream_attempts)}${events ? `; ${events}` : ''}`);
  }
  table(
    'per strategy (client-observed latency; 429s and requests to B after its death counted at the fakes; cache-read share = cached_tokens / prompt_tokens of the answers)',
    ['run', 'requests', 'success', 'p50 ms', 'p99 ms', '429s', 'to dead B', 'cache read', 'run s'],
    rows,
  );
  table('traffic share of the answered requests by X-Gateway-Upstream', ['run', ...keyLabels, 'other'], shareRows);
  const out = new URL('./results/', import.meta.url).pathname;
  mkdirSync(out, { recursive: true });
  const file = path.join(out, `routing${quick ? '-quick' : ''}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify(results, null, 2) + '\n');
  console.log(`\nresults: ${path.relative(process.cwd(), file)} (${((performance.now() - started) / 1000).toFixed(0)} s in all)`);
} finally {
  await Promise.all(upstreams.map((u) => u.close()));
  rmSync(template, { recursive: true, force: true });
}
