// The CLI as an operator runs it: a separate process, first against the database directly, then
// through the admin API of a running server that holds the embedded database.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDataDir, minimalConfig } from '../helpers/gateway.ts';
import { openDatabase } from '../../server/db/client.ts';
import { UsageLedger } from '../../server/billing/ledger.ts';
import { maintainLedger } from '../../server/billing/ledger-partitions.ts';

const bin = new URL('../../bin/model-gateway.mjs', import.meta.url).pathname;
const run = promisify(execFile);

let dataDir: string;
let env: NodeJS.ProcessEnv;
let server: ChildProcess | undefined;

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return cliWith(env, ...args);
}
async function cliWith(env: NodeJS.ProcessEnv, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
const json = async (...args: string[]) => {
  const r = await cli(...args, '--json');
  expect(r.stderr, r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
};

async function startServer(): Promise<string> {
  server = spawn(process.execPath, [bin, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  server.stdout!.on('data', (d) => (log += d));
  server.stderr!.on('data', (d) => (log += d));
  const info = path.join(dataDir, 'server.json');
  for (let i = 0; i < 300 && !existsSync(info); i++) await new Promise((r) => setTimeout(r, 100));
  if (!existsSync(info)) throw new Error(`server did not start:\n${log}`);
  return JSON.parse(readFileSync(info, 'utf8')).url;
}

beforeAll(() => {
  dataDir = freshDataDir();
  const config = path.join(dataDir, 'gateway.config.yaml');
  writeFileSync(config, minimalConfig);
  env = { PATH: process.env.PATH, HOME: process.env.HOME, GATEWAY_METADATA_FETCH: 'off', DATA_DIR: dataDir, GATEWAY_CONFIG: config, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
});
afterAll(() => {
  server?.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

it('--help lists the commands, and every subcommand has help', async () => {
  const top = await cli('--help');
  for (const c of ['serve', 'migrate', 'users', 'keys', 'config', 'usage', '--json']) expect(top.stdout).toContain(c);
  const keys = await cli('keys', 'create', '--help');
  expect(keys.stdout).toContain('--user <user>');
  expect(keys.stdout).toContain('printed once');
});

let directKey: string;
describe('without a server: straight to the database', () => {
  it('creates, lists and re-plans users, and creates keys that are shown once', async () => {
    const user = await json('users', 'create', '--email', 'Ops@Example.com', '--name', 'Ops');
    expect(user).toMatchObject({ email: 'ops@example.com', name: 'Ops', plan: 'free' });
    expect(await json('users', 'set-plan', 'ops@example.com', 'pro')).toMatchObject({ plan: 'pro' });
    const key = await json('keys', 'create', '--user', user.id, '--name', 'laptop');
    expect(key.key).toMatch(/^mg-/);
    directKey = key.key;
    const keys = await json('keys', 'list');
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ id: key.id, prefix: key.key.slice(0, 9), name: 'laptop', revoked_at: null });
    expect(JSON.stringify(keys)).not.toContain(key.key);
    const human = await cli('users', 'list');
    expect(human.stdout).toMatch(/^id\s+email\s+name\s+plan\s+role\s+disabled\s+created_at\n/);
    expect(human.stdout).toContain('ops@example.com');
  });

  it('explains mistakes and exits non-zero', async () => {
    const r = await cli('users', 'set-plan', 'ops@example.com', 'platinum');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("Unknown plan 'platinum'. Plans: free, pro.");
    // With --json the error is the JSON document on stdout (a script's `| jq` reads it), nothing on stderr.
    const j = await cli('keys', 'create', '--user', 'nobody@example.com', '--json');
    expect(j.code).toBe(1);
    expect(j.stderr).toBe('');
    expect(JSON.parse(j.stdout).error).toMatchObject({ code: 'user_not_found', type: 'invalid_request_error' });
    expect((await cli('keys', 'create')).stderr).toContain("required option '--user <user>' not specified");
  });

  it('checks the config file', async () => {
    const ok = await json('config', 'check');
    expect(ok).toMatchObject({ valid: true, providers: ['openai'], models: ['gpt-4o-mini'], plans: ['free', 'pro'], warnings: [] });
    const bad = path.join(dataDir, 'bad.yaml');
    writeFileSync(bad, 'providers:\n  - { id: x, type: nope }\n');
    const r = await cli('config', 'check', '--file', bad);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${bad}:2:20 providers[0].type`);
  });

  it('config check refuses an upstream whose provider type cannot serve the model’s capability (the registry decides)', async () => {
    const file = path.join(dataDir, 'wrong-type.yaml');
    writeFileSync(
      file,
      `providers:
  - { id: voice, type: elevenlabs, api_key: k }
  - { id: claude, type: anthropic, api_key: k }
models:
  - { id: talk, endpoint: chat, upstreams: [{ provider: voice, model: x }] }
  - { id: emb, endpoint: embeddings, upstreams: [{ provider: claude, model: y }] }
  - { id: tts, endpoint: speech, upstreams: [{ provider: claude, model: z }] }
`,
    );
    const r = await cli('config', 'check', '--file', file);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      [
        `invalid configuration in ${file}`,
        `  - ${file}:5:57 models[0].upstreams[0].provider: provider "voice" is elevenlabs, which cannot serve chat (served by: openai, openai-compatible, anthropic, gemini)`,
        `  - ${file}:6:62 models[1].upstreams[0].provider: provider "claude" is anthropic, which cannot serve embeddings (served by: openai, openai-compatible, gemini)`,
        `  - ${file}:7:58 models[2].upstreams[0].provider: provider "claude" is anthropic, which cannot serve speech (served by: openai, openai-compatible, gemini, elevenlabs)`,
        '',
      ].join('\n'),
    );
  });

  it('config check reports what serve warns about, exits 0 on warnings only, and lists every error at once', async () => {
    const file = path.join(dataDir, 'warn.yaml');
    writeFileSync(
      file,
      `providers:
  - { id: claude, type: anthropic, api_key: "\${ANTHROPIC_API_KEY:-}" }
  - { id: local, type: openai-compatible, base_url: "http://127.0.0.1:9/v1" }
models:
  - { id: sonnet, endpoint: messages, upstreams: [{ provider: claude, model: claude-sonnet-4-5 }] }
  - { id: llama, endpoint: chat, upstreams: [{ provider: local, model: llama }] }
`,
    );
    const human = await cli('config', 'check', '--file', file);
    expect(human.code).toBe(0);
    expect(human.stderr).toBe('');
    expect(human.stdout).toBe(
      [
        `${file}: valid, 2 warnings`,
        '  providers: claude, local',
        '  models: 2',
        '  plans: free, pro (default free)',
        'warnings:',
        '  - provider claude has no api_key: its upstreams are skipped',
        '  - model sonnet has no upstream that can serve it: claude has no api_key',
        '',
      ].join('\n'),
    );
    expect((await json('config', 'check', '--file', file)).warnings).toEqual([
      'provider claude has no api_key: its upstreams are skipped',
      'model sonnet has no upstream that can serve it: claude has no api_key',
    ]);
    // serve logs the same lines as warnings (then stops here: the port is taken).
    const blocker = await occupy();
    try {
      const served = await serveFails({ GATEWAY_CONFIG: file, PORT: String(blocker.port), LOG_LEVEL: 'warn' });
      // The same set (a full-suite run once printed the two in the other order; which comes first is no behaviour).
      expect(served.lines.filter((l) => l.level === 40).map((l) => l.msg).sort()).toEqual([
        'model sonnet has no upstream that can serve it: claude has no api_key',
        'provider claude has no api_key: its upstreams are skipped',
      ]);
    } finally {
      blocker.server.close();
    }

    // The shipped example: valid, with warnings (no keys in this environment), exit code 0.
    const example = new URL('../../gateway.config.example.yaml', import.meta.url).pathname;
    const checked = await cli('config', 'check', '--file', example, '--json');
    expect(checked.code).toBe(0);
    const report = JSON.parse(checked.stdout);
    expect(report).toMatchObject({ valid: true, providers: ['openai', 'anthropic', 'gemini', 'elevenlabs', 'openrouter', 'local-vllm', 'openai-pool'] });
    expect(report.warnings).toContain('provider openai has no api_key: its upstreams are skipped');

    const broken = path.join(dataDir, 'broken.json');
    writeFileSync(broken, '{\n  "providers": [{ "id": "p", "type": "openai" }],\n  "models": [{ "id": "m", "endpoint": "chat", "upstreams": [{ "provider": "q", "model": "x" }], "required_plan": "gold" }],\n  "modles": []\n}\n');
    const r = await cli('config', 'check', '--file', broken);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      [
        `invalid configuration in ${broken}`,
        `  - ${broken}:3:75 models[0].upstreams[0].provider: unknown provider "q" (known: p)`,
        `  - ${broken}:3:114 models[0].required_plan: unknown plan "gold" (known: free, pro)`,
        `  - ${broken}:4:3 modles: unknown field (did you mean models?)`,
        '',
      ].join('\n'),
    );
    const j = await cli('config', 'check', '--file', broken, '--json');
    expect(j.code).toBe(2);
    expect(j.stderr).toBe('');
    expect(JSON.parse(j.stdout).error).toMatchObject({ type: 'config_error', problems: [expect.stringContaining('unknown provider "q"'), expect.stringContaining('unknown plan "gold"'), expect.stringContaining('modles: unknown field')] });

    writeFileSync(broken, '{\n  "providers": [\n    { "id": "p", "type": "openai" }\n  ],\n}\n');
    expect((await cli('config', 'check', '--file', broken)).stderr).toBe(`cannot parse ${broken}\n  - ${broken}:5:1: invalid JSON: expected a property name (no comma before '}'), found '}'\n`);
  });

  it('migrate reports an up-to-date database', async () => {
    expect((await cli('migrate')).stdout).toContain('is up to date');
  });

  it('usage rebuild recomputes the daily sums a day at a time, shows its progress, and refuses a date that is none', async () => {
    const bad = await cli('usage', 'rebuild', '--from', '2026-02-30');
    expect(bad).toMatchObject({ code: 1, stdout: '', stderr: "--from '2026-02-30' is not a calendar date (YYYY-MM-DD)\n" });
    expect((await cli('usage', 'rebuild', '--to', '2026-13-45')).stderr).toBe("--to '2026-13-45' is not a calendar date (YYYY-MM-DD)\n");
    expect((await cli('usage', 'rebuild', '--from', 'yesterday')).stderr).toBe("--from 'yesterday' is not a calendar date (YYYY-MM-DD)\n");
    expect((await cli('usage', 'rebuild', '--from', '2026-11-02', '--to', '2026-11-01')).stderr).toBe('--from 2026-11-02 is after --to 2026-11-01\n');
    expect((await cli('usage', 'rebuild')).stdout).toBe('no day with raw ledger rows in that range\n');
    // Two days of ledger rows, written as a gateway writes them; one day's sums then lost.
    const db = await openDatabase({ dataDir });
    await maintainLedger(db.sql, { retention_days: 90, aggregate_retention_days: 730 }, Date.parse('2026-11-20T12:00:00Z'));
    const ledger = new UsageLedger(db.sql, mkdtempSync(path.join(tmpdir(), 'mg-cli-ledger-')));
    for (const [i, at] of ['2026-11-19T23:59:59.999Z', '2026-11-20T00:00:00.000Z', '2026-11-20T08:00:00.000Z'].entries()) {
      ledger.write({ requestId: `req_cli_${i}`, apiKeyId: 'key_cli', userId: 'user_cli', oauthAppId: null, model: 'gpt-4o-mini', provider: 'openai', upstreamModel: null, endpoint: 'chat', promptTokens: 10, completionTokens: 5, cachedTokens: 0, reasoningTokens: 0, surchargeTokens: 0, multiplier: 1, billedTokens: 15, usageSource: 'reported', status: 200, errorCode: null, latencyMs: 3, createdAt: at });
    }
    await ledger.close();
    await db.sql.exec(`DELETE FROM usage_daily WHERE day = '2026-11-20'`);
    await db.close();
    const r = await cli('usage', 'rebuild', '--from', '2026-11-01', '--to', '2026-11-20');
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^2026-11-19 {2}1 request\(s\) {2}\d+ ms {2}\(1\/2\)\n2026-11-20 {2}2 request\(s\) {2}\d+ ms {2}\(2\/2\)\n$/);
    expect(r.stdout).toBe('rebuilt 2 day(s), 2026-11-19 … 2026-11-20: 3 request(s)\n2026-11-01…2026-11-18: no raw rows kept (past ledger.retention_days, or never written); aggregates left as they are\n');
    const again = await json('usage', 'rebuild', '--to', '2026-11-20');
    expect(again).toMatchObject({ days: 2, requests: 3, from: '2026-11-19', to: '2026-11-20', notKept: [] });
    const check = await openDatabase({ dataDir });
    expect(await check.sql.query(`SELECT to_char(day, 'YYYY-MM-DD') AS day, requests, billed_tokens::int AS billed FROM usage_daily ORDER BY day`)).toEqual([
      { day: '2026-11-19', requests: 1, billed: 15 },
      { day: '2026-11-20', requests: 2, billed: 30 },
    ]);
    await check.close();
  });
});

describe('with a server running on the embedded database', () => {
  let url: string;
  beforeAll(async () => {
    url = await startServer();
  }, 60_000);

  // An authenticated read: 200 with a valid key, 401 without.
  const chat = (key: string) => fetch(`${url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } });

  it('a key made while no server ran authenticates', async () => {
    expect((await chat(directKey)).status).toBe(200);
    expect((await chat('mg-unknown')).status).toBe(401);
  });

  it('goes through the admin API; its keys work at once and revoked keys stop within the cache TTL', async () => {
    const user = await json('users', 'create', '--email', 'live@example.com');
    const key = await json('keys', 'create', '--user', 'live@example.com');
    expect((await chat(key.key)).status).toBe(200);
    const revoked = await json('keys', 'revoke', key.id);
    expect(revoked.revoked_at).not.toBeNull();
    expect((await chat(key.key)).status).toBe(401);
    expect(user.plan).toBe('free');
    const list = await json('users', 'list');
    expect(list.map((u: { email: string }) => u.email)).toEqual(['ops@example.com', 'live@example.com']);
  });

  it('usage rebuild asks for the server to be stopped first', async () => {
    const r = await cli('usage', 'rebuild');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^a running gateway \(process \d+\) holds the embedded database in .+; stop it, run the rebuild, and start it again\n$/);
  });

  it('a second server on the same embedded database refuses to start', async () => {
    const r = await cli('serve');
    expect(r.stdout + r.stderr).toMatch(/embedded database .* is in use by process \d+/);
  });

  it('SIGTERM stops the server gracefully and releases the database', async () => {
    const exited = new Promise<number | null>((resolve) => server!.once('exit', (code) => resolve(code)));
    server!.kill('SIGTERM');
    expect(await exited).toBe(0);
    server = undefined;
    expect(existsSync(path.join(dataDir, 'server.json'))).toBe(false);
    expect(existsSync(path.join(dataDir, 'db.lock'))).toBe(false);
    // And the CLI is back to direct mode.
    expect(await json('keys', 'list')).toHaveLength(2);
  }, 40_000);
});

/** A TCP port held by this test process. */
async function occupy(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  return { server, port: (server.address() as { port: number }).port };
}

/** Runs `serve` expecting it to give up; its log lines (JSON), exit code and how long it took. */
/** Whether another user can run `file`: every directory above it lets others through. */
function runnableByOthers(file: string): boolean {
  for (let p = file; ; p = path.dirname(p)) {
    if (!(statSync(p).mode & 0o001)) return false;
    if (p === path.dirname(p)) return true;
  }
}

async function serveFails(extra: NodeJS.ProcessEnv, as: { uid?: number; gid?: number } = {}) {
  const started = performance.now();
  // Under another user, this Node may be out of reach (CI's Node 22 and 24 live under /root/.npm):
  // the system's Node then runs the same bundle.
  const node = as.uid === undefined || runnableByOthers(process.execPath) || !existsSync('/usr/bin/node') ? process.execPath : '/usr/bin/node';
  const child = spawn(node, [bin, 'serve'], { env: { ...env, ...extra }, stdio: ['ignore', 'pipe', 'pipe'], ...as });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  // 'close', not 'exit': the last lines may still be in the pipes when the process exits.
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('close', resolve);
    child.once('error', reject);
  });
  const ms = performance.now() - started;
  const lines = stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { level: number; msg: string });
  return { code, ms, stderr, lines, fatal: lines.filter((l) => l.level === 60).map((l) => l.msg) };
}

describe('start-up errors name the setting, the value and the fix', () => {
  let scratch: string;
  beforeAll(async () => {
    scratch = mkdtempSync(path.join(tmpdir(), 'mg-startup-'));
    chmodSync(scratch, 0o755);
    // Readable by the other user the unwritable-DATA_DIR test runs the gateway as.
    writeFileSync(path.join(scratch, 'gateway.config.yaml'), minimalConfig, { mode: 0o644 });
    await cli('--version'); // the bundle is fresh before a process of another user runs it
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('DATA_DIR that is a file, or under a file', async () => {
    const file = path.join(scratch, 'a-file');
    writeFileSync(file, '');
    const r = await serveFails({ DATA_DIR: file, PORT: '0' });
    expect(r.code).toBe(1);
    expect(r.fatal).toEqual([`cannot start: DATA_DIR ${file} is a file, not a directory: set DATA_DIR to a directory (it is created when missing), or move the file away.`]);
    expect(r.stderr).toBe('');
    const under = await serveFails({ DATA_DIR: path.join(file, 'data'), PORT: '0' });
    expect(under.fatal).toEqual([`cannot start: DATA_DIR ${file}/data cannot be created: ${file} is a file, not a directory. Set DATA_DIR to a directory (it is created when missing).`]);
  });

  it('DATA_DIR this user cannot write, existing or to be created', async (ctx) => {
    // As root, permissions do not bind: run the gateway as nobody instead.
    const root = process.getuid?.() === 0;
    // nobody must be able to reach the checkout (not so in a clone under a private `mktemp -d`).
    if (root && !runnableByOthers(path.dirname(bin))) return ctx.skip('the checkout is not reachable by other users, so the gateway cannot run as nobody here');
    const as = root ? { uid: 65534, gid: 65534 } : {};
    const user = root ? 'user nobody, uid 65534' : `user ${userInfo().username}, uid ${process.getuid!()}`;
    const locked = path.join(scratch, 'read-only');
    mkdirSync(locked, { mode: 0o555 });
    chmodSync(locked, 0o555);
    const own = { PORT: '0', HOME: scratch, GATEWAY_CONFIG: path.join(scratch, 'gateway.config.yaml') };
    const r = await serveFails({ ...own, DATA_DIR: locked }, as);
    expect(r.code).toBe(1);
    expect(r.fatal).toEqual([
      `cannot start: DATA_DIR ${locked} is not writable by this process (${user}); the gateway keeps its embedded database, lock, admin token and usage ledger there. Make it writable by that user (chown/chmod), or set DATA_DIR to a directory this user can write.`,
    ]);
    expect(r.stderr).toBe('');
    const inside = path.join(locked, 'data');
    const created = await serveFails({ ...own, DATA_DIR: inside }, as);
    expect(created.fatal).toEqual([
      `cannot start: DATA_DIR ${inside} cannot be created: ${locked} is not writable by this process (${user}). Create ${inside} writable by that user, or set DATA_DIR to a directory this user can write.`,
    ]);
  });

  it('a port in use is reported at once, before the database is opened and migrated', async () => {
    const blocker = await occupy();
    const dir = path.join(scratch, 'port-data');
    try {
      const r = await serveFails({ DATA_DIR: dir, PORT: String(blocker.port) });
      expect(r.code).toBe(1);
      expect(r.fatal).toEqual([`cannot start: PORT ${blocker.port} on 127.0.0.1 is already in use (another gateway, or another program): stop it, or set PORT to a free port.`]);
      expect(r.stderr).toBe('');
      // The check comes before the database is opened: nothing of it exists. The time bound only
      // catches a wait of several seconds (the whole process, Node's start included, takes ~1 s
      // here, 1.64 s once on a loaded machine: so not a tighter bound).
      expect(existsSync(path.join(dir, 'db'))).toBe(false);
      expect(existsSync(path.join(dir, 'db.lock'))).toBe(false);
      expect(r.ms).toBeLessThan(4_000);
    } finally {
      blocker.server.close();
    }
  });
});
