// The CLI as an operator runs it: a separate process, first against the database directly, then
// through the admin API of a running server that holds the embedded database.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDataDir, minimalConfig } from '../helpers/gateway.ts';

const bin = new URL('../../bin/model-gateway.mjs', import.meta.url).pathname;
const run = promisify(execFile);

let dataDir: string;
let env: NodeJS.ProcessEnv;
let server: ChildProcess | undefined;

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
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
  for (const c of ['serve', 'migrate', 'users', 'keys', 'config', '--json']) expect(top.stdout).toContain(c);
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
    expect(human.stdout).toMatch(/^id\s+email\s+name\s+plan\s+created_at\n/);
    expect(human.stdout).toContain('ops@example.com');
  });

  it('explains mistakes and exits non-zero', async () => {
    const r = await cli('users', 'set-plan', 'ops@example.com', 'platinum');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("Unknown plan 'platinum'. Plans: free, pro.");
    const j = await cli('keys', 'create', '--user', 'nobody@example.com', '--json');
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stderr).error).toMatchObject({ code: 'user_not_found', type: 'invalid_request_error' });
    expect((await cli('keys', 'create')).stderr).toContain("required option '--user <user>' not specified");
  });

  it('checks the config file', async () => {
    const ok = await json('config', 'check');
    expect(ok).toMatchObject({ valid: true, providers: ['openai'], models: ['gpt-4o-mini'], plans: ['free', 'pro'] });
    const bad = path.join(dataDir, 'bad.yaml');
    writeFileSync(bad, 'providers:\n  - { id: x, type: nope }\n');
    const r = await cli('config', 'check', '--file', bad);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${bad}:2:20 providers[0].type`);
  });

  it('migrate reports an up-to-date database', async () => {
    expect((await cli('migrate')).stdout).toContain('is up to date');
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
