// `model-gateway serve` as an operator runs it (bin/model-gateway.mjs in a process of its own), with
// its JSON log lines at hand: for the tests of workers and of graceful shutdown, which watch what
// the processes do (which worker answered, when one was replaced, how long a drain took).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const bin = new URL('../../bin/model-gateway.mjs', import.meta.url).pathname;

export type LogLine = { level: number; time: number; msg: string; pid: number; worker?: number; worker_pid?: number; http?: { method: string; url: string; status: number }; [k: string]: unknown };

export type CliGateway = {
  child: ChildProcess;
  dataDir: string;
  /** From DATA_DIR/server.json once it exists. */
  url: string;
  logs(): LogLine[];
  /** Everything written to stdout and stderr. */
  output(): string;
  exited: Promise<{ code: number | null; signal: string | null }>;
  /** The first log line that `match` accepts, waiting for it. */
  waitForLog(match: (l: LogLine) => boolean, ms?: number): Promise<LogLine>;
  /** Sends `signal` and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: string | null }>;
  /** SIGKILL to the process and every worker it logged (workers outlive a killed primary only until they notice): none is left behind. */
  kill(): Promise<void>;
};

/** The environment every spawned gateway gets: nothing inherited from the test process but the paths. */
export const baseEnv = (): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  HOST: '127.0.0.1',
  LOG_FORMAT: 'json',
  LOG_LEVEL: 'info',
  GATEWAY_METADATA_FETCH: 'off',
  GATEWAY_IDLE_GC: 'off',
});

/** Spawns `serve` with `args`; resolves once server.json exists (`waitForInfo`), or at once. */
export async function spawnServe(o: { env: NodeJS.ProcessEnv; dataDir: string; args?: string[]; waitForInfo?: boolean }): Promise<CliGateway> {
  const child = spawn(process.execPath, [bin, 'serve', ...(o.args ?? [])], { env: { ...o.env, DATA_DIR: o.dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let lines: LogLine[] = [];
  let partial = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d;
    const text = partial + d.toString();
    const parts = text.split('\n');
    partial = parts.pop()!;
    lines = lines.concat(parts.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as LogLine));
  });
  child.stderr!.on('data', (d: Buffer) => (out += d));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const gw: CliGateway = {
    child,
    dataDir: o.dataDir,
    url: '',
    logs: () => lines,
    output: () => out,
    exited,
    async waitForLog(match, ms = 30_000) {
      const end = Date.now() + ms;
      for (;;) {
        const found = lines.find(match);
        if (found) return found;
        if (Date.now() > end) throw new Error(`no such log line within ${ms} ms:\n${out.slice(-4000)}`);
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the gateway exited (${child.exitCode ?? child.signalCode}):\n${out.slice(-4000)}`);
        await sleep(25);
      }
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
    async kill() {
      await gw.stop('SIGKILL');
      for (const l of lines) {
        try {
          if (typeof l.worker_pid === 'number') process.kill(l.worker_pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    },
  };
  if (o.waitForInfo !== false) {
    const info = path.join(o.dataDir, 'server.json');
    for (let i = 0; i < 600 && !existsSync(info); i++) {
      if (child.exitCode !== null) throw new Error(`the gateway exited (${child.exitCode}):\n${out}`);
      await sleep(50);
    }
    if (!existsSync(info)) throw new Error(`the gateway did not start:\n${out}`);
    gw.url = (JSON.parse(readFileSync(info, 'utf8')) as { url: string }).url;
  }
  return gw;
}

export type Answer = { status: number; headers: Record<string, string | string[] | undefined>; body: string; error?: string };

/**
 * A POST on a connection of its own (closed after the answer): each request is a new connection, so
 * the cluster's primary hands each to a worker in turn, and a dead worker's connections are never reused.
 */
export function postOnce(url: string, pathname: string, headers: Record<string, string>, body: unknown): Promise<Answer> {
  return new Promise((resolve) => {
    const u = new URL(pathname, url);
    const req = httpRequest({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent: false, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      res.on('error', (err) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, error: String(err) }));
    });
    req.on('error', (err) => resolve({ status: 0, headers: {}, body: '', error: String(err) }));
    // A connection handed to a worker that has just died is never answered: a failure, not a hang.
    req.setTimeout(10_000, () => req.destroy(new Error('no answer within 10 s')));
    req.end(JSON.stringify(body));
  });
}

/** A user and an API key made through the admin API. */
export async function newKey(url: string, adminToken: string, plan?: string): Promise<string> {
  const h = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
  const email = `u-${Math.random().toString(36).slice(2, 10)}@example.com`;
  const user = await fetch(`${url}/admin/v1/users`, { method: 'POST', headers: h, body: JSON.stringify({ email, ...(plan ? { plan } : {}) }) });
  if (user.status !== 201) throw new Error(`creating a user: ${user.status} ${await user.text()}`);
  const key = await fetch(`${url}/admin/v1/keys`, { method: 'POST', headers: h, body: JSON.stringify({ user: email }) });
  return ((await key.json()) as { key: string }).key;
}

/** The config the worker and shutdown tests serve, over test/helpers/fake-upstreams.ts. */
export const shutdownTestConfig = (fake: string) => `
providers:
  - { id: openai, type: openai, base_url: "${fake}/v1", api_key: k }
  - { id: anthropic, type: anthropic, base_url: "${fake}/v1", api_key: k }
models:
  # answered at once (the recorded chat answer)
  - { id: quick, endpoint: chat, upstreams: [{ provider: openai, model: gpt-4o-mini }] }
  # answered after 300 ms
  - { id: delayed, endpoint: chat, upstreams: [{ provider: openai, model: delayed-model }] }
  # a stream of ~1.1 s: the recorded Messages stream, 100 ms an event, translated to chat chunks
  - { id: short-stream, endpoint: chat, upstreams: [{ provider: anthropic, model: slow-model }] }
  # a stream of ~30 s: the recorded chat stream, 100 ms a chunk
  - { id: long-stream, endpoint: chat, upstreams: [{ provider: openai, model: slow-model }] }
plans:
  - { id: free, rank: 0, daily_tokens: 1000000000, requests_per_minute: 1000000, max_concurrent_jobs: 5 }
key_cache_ttl_ms: 60000
`;

export const chat = (model: string, stream = false) => ({ model, messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 64, ...(stream ? { stream: true } : {}) });
