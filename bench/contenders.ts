// Starting every contender against the same mocks, each reporting where to send a chat request.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { randomToken } from '../server/runtime/secrets.ts';

export type Target = { name: string; url: string; path: string; headers: Record<string, string>; body: string; pid?: number };
const root = fileURLToPath(new URL('..', import.meta.url));
/** A wrk script that POSTs `body` with `headers`. */
export function writeWrkScript(file: string, body: string, headers: Record<string, string>): string {
  const lines = Object.entries(headers).map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`);
  writeFileSync(file, `wrk.method = "POST"\nwrk.body = ${JSON.stringify(body)}\n${lines.join('\n')}\n`);
  return file;
}

export const chatBody = (model: string, stream = false) => JSON.stringify({ model, messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 64, ...(stream ? { stream: true } : {}) });

async function waitForFile(file: string, proc: ChildProcess, log: () => string) {
  for (let i = 0; i < 600 && !existsSync(file); i++) {
    if (proc.exitCode !== null) throw new Error(`process exited: ${log()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  if (!existsSync(file)) throw new Error(`timed out: ${log()}`);
}

/**
 * `workers`: `serve --workers N` (WORKERS); 1 by default, so that the gateway on PostgreSQL + Redis,
 * which would otherwise run one worker per core, is one process like the other contenders.
 */
export async function startGateway(opts: {
  json: string;
  sse: string;
  postgres?: boolean;
  redisUrl?: string;
  env?: Record<string, string>;
  /** Another build's CLI entry (`bench -- cpu --against`). */
  bin?: string;
  workers?: number;
  nodeArgs?: string[];
  /** The process's standard output (e.g. `--trace-gc` lines); ignored when absent. */
  onStdout?: (chunk: Buffer) => void;
}): Promise<{ url: string; key: string; pid: number; close(): Promise<void> }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'mg-bench-gw-'));
  const config = path.join(dir, 'gateway.config.yaml');
  writeFileSync(
    config,
    `providers:
  - { id: mock-openai, type: openai, base_url: "${opts.json}/v1", api_key: bench }
  - { id: mock-anthropic, type: anthropic, base_url: "${opts.json}/v1", api_key: bench }
  - { id: mock-stream, type: openai, base_url: "${opts.sse}/v1", api_key: bench }
models:
  - { id: bench-openai, endpoint: chat, upstreams: [{ provider: mock-openai, model: gpt-4o-mini }] }
  - { id: bench-anthropic, endpoint: chat, upstreams: [{ provider: mock-anthropic, model: claude-sonnet-4-5 }] }
  - { id: bench-stream, endpoint: chat, upstreams: [{ provider: mock-stream, model: gpt-4o-mini }] }
plans:
  - { id: bench, rank: 0, daily_tokens: 1000000000000, requests_per_minute: 100000000, max_concurrent_jobs: 10 }
${
  // Experiments: BENCH_GATEWAY_CONFIG='request_log: { enabled: false }' npm run bench:profile -- same
  process.env.BENCH_GATEWAY_CONFIG ?? ''
}
`,
  );
  let dropDb: (() => Promise<void>) | null = null;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATA_DIR: dir,
    GATEWAY_CONFIG: config,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'warn',
    GATEWAY_METADATA_FETCH: 'off',
    GATEWAY_ADMIN_TOKEN: `mga-${randomToken(30)}`,
    WORKERS: String(opts.workers ?? 1),
    // Experiments: BENCH_GATEWAY_ENV='{"UPSTREAM_MAX_CONNECTIONS":"256"}' npm run bench -- streams
    ...(process.env.BENCH_GATEWAY_ENV ? (JSON.parse(process.env.BENCH_GATEWAY_ENV) as Record<string, string>) : {}),
    ...opts.env,
  };
  if (opts.postgres) {
    const base = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
    const name = `mg_bench_${randomToken(8).toLowerCase()}`;
    const c = new pg.Client({ connectionString: base });
    await c.connect();
    await c.query(`CREATE DATABASE ${name}`);
    await c.end();
    const u = new URL(base);
    u.pathname = `/${name}`;
    env.DATABASE_URL = u.toString();
    dropDb = async () => {
      const d = new pg.Client({ connectionString: base });
      await d.connect();
      await d.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await d.end();
    };
  }
  if (opts.redisUrl) {
    env.REDIS_URL = opts.redisUrl;
    env.REDIS_KEY_PREFIX = `mgbench:${randomToken(6)}:`;
  }
  // For profiling the gateway under load, e.g. BENCH_GATEWAY_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof";
  // BENCH_GATEWAY_BIN: another build's bin/model-gateway.mjs (a worktree of the commit to compare with).
  const nodeArgs = [...(process.env.BENCH_GATEWAY_NODE_ARGS?.split(/\s+/).filter(Boolean) ?? []), ...(opts.nodeArgs ?? [])];
  const proc = spawn(process.execPath, [...nodeArgs, opts.bin ?? (process.env.BENCH_GATEWAY_BIN || path.join(root, 'bin/model-gateway.mjs')), 'serve'], { env, stdio: ['ignore', opts.onStdout ? 'pipe' : 'ignore', 'pipe'] });
  if (opts.onStdout) proc.stdout!.on('data', opts.onStdout);
  let log = '';
  proc.stderr!.on('data', (d) => (log += d));
  await waitForFile(path.join(dir, 'server.json'), proc, () => log);
  // With workers, server.json appears when the first serves; it counts them as they do.
  const info = () => JSON.parse(readFileSync(path.join(dir, 'server.json'), 'utf8')) as { url: string; serving?: number };
  for (let i = 0; i < 600 && (info().serving ?? 1) < (opts.workers ?? 1); i++) await new Promise((r) => setTimeout(r, 100));
  const url = info().url;
  const admin = { authorization: `Bearer ${env.GATEWAY_ADMIN_TOKEN}`, 'content-type': 'application/json' };
  await fetch(`${url}/admin/v1/users`, { method: 'POST', headers: admin, body: JSON.stringify({ email: 'bench@example.com', plan: 'bench' }) });
  const { key } = (await (await fetch(`${url}/admin/v1/keys`, { method: 'POST', headers: admin, body: JSON.stringify({ user: 'bench@example.com' }) })).json()) as { key: string };
  return {
    url,
    key,
    pid: proc.pid!,
    close: async () => {
      await new Promise<void>((r) => {
        proc.once('exit', () => r());
        proc.kill('SIGTERM');
      });
      await dropDb?.();
    },
  };
}

export async function startPortkey(): Promise<{ url: string; close(): void } | null> {
  const entry = path.join(root, 'node_modules/@portkey-ai/gateway/build/start-server.js');
  if (!existsSync(entry)) return null;
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const proc = spawn(process.execPath, [entry, `--port=${port}`, '--headless'], { stdio: 'ignore', env: { ...process.env, NODE_ENV: 'production' } });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    try {
      await fetch(url);
      return { url, close: () => proc.kill('SIGTERM') };
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  proc.kill('SIGKILL');
  return null;
}
