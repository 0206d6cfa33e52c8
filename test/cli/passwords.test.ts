// `users set-password` and `users reset-link` as an operator runs them: the CLI as a process, the
// password typed at a hidden prompt (a real terminal, through util-linux `script`) or piped on
// standard input, never an argument; first straight to the database, then through a running
// gateway's admin API. Also what the CLI says when the admin token is missing or wrong.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../helpers/browser.ts';
import { freshDataDir, minimalConfig } from '../helpers/gateway.ts';

const bin = new URL('../../bin/model-gateway.mjs', import.meta.url).pathname;
const PASSWORD = 'quartz lantern meadow 7';

let dataDir: string;
let env: NodeJS.ProcessEnv;
let server: ChildProcess | undefined;

/** Runs the CLI with `stdin` as its standard input (closed after it). */
function cli(args: string[], stdin = '', withEnv: NodeJS.ProcessEnv = env): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { env: withEnv, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

/**
 * Runs the CLI on a pseudo-terminal (`script`), answering each prompt as a person types: what the
 * terminal shows is returned, so a test sees whether the password was echoed.
 */
function cliOnTerminal(args: string[], answers: string[]): Promise<{ code: number; screen: string }> {
  const command = [process.execPath, bin, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return new Promise((resolve) => {
    const child = spawn('script', ['-qefc', command, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let screen = '';
    let answered = 0;
    const prompts = [/New password for [^:]+: $/, /Repeat it: $/];
    child.stdout.on('data', (d) => {
      screen += d;
      if (answered < answers.length && prompts[answered]!.test(screen)) child.stdin.write(answers[answered++] + '\r');
    });
    child.on('close', (code) => resolve({ code: code ?? -1, screen }));
  });
}

beforeAll(() => {
  dataDir = freshDataDir();
  const config = path.join(dataDir, 'gateway.config.yaml');
  writeFileSync(config, minimalConfig);
  env = { PATH: process.env.PATH, HOME: process.env.HOME, GATEWAY_METADATA_FETCH: 'off', DATA_DIR: dataDir, GATEWAY_CONFIG: config, PORT: '8099', HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
});
afterAll(() => {
  server?.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

it('help says how to give the password without putting it on the command line', async () => {
  const r = await cli(['users', 'set-password', '--help']);
  expect(r.stdout).toContain('The password is never an argument: shell history would keep it. In scripts:\n  printf \'%s\\n\' "$PASSWORD" | model-gateway users set-password ada@example.com');
  expect((await cli(['users', 'reset-link', '--help'])).stdout).toContain('--expires-in <minutes>  how long the link works (5–10080) (default: "1440")');
});

describe('without a server: straight to the database', () => {
  it('sets a password read from standard input', async () => {
    const created = await cli(['users', 'create', '--email', 'ops@example.com', '--json']);
    const user = JSON.parse(created.stdout) as { id: string };
    const r = await cli(['users', 'set-password', 'ops@example.com'], `${PASSWORD}\n`);
    expect(r).toEqual({ code: 0, stdout: `password set for user ${user.id} <ops@example.com>; 0 dashboard sessions ended\n`, stderr: '' });
  });

  it('refuses a weak password with the sign-up rule, and an empty standard input', async () => {
    const weak = await cli(['users', 'set-password', 'ops@example.com'], 'password\n');
    expect(weak).toMatchObject({ code: 1, stderr: 'Choose a longer password: at least 10 characters. (weak_password)\n' });
    const none = await cli(['users', 'set-password', 'ops@example.com'], '');
    expect(none).toMatchObject({
      code: 1,
      stderr: 'no password on standard input: type it at the prompt (run in a terminal), or pipe it as the first line\n',
    });
  });

  it('asks twice on a terminal without echoing, and refuses two different answers', async () => {
    const ok = await cliOnTerminal(['users', 'set-password', 'ops@example.com'], [PASSWORD, PASSWORD]);
    expect(ok.code).toBe(0);
    expect(ok.screen).toMatch(/New password for ops@example\.com: \r?\nRepeat it: \r?\npassword set for user usr_\w+ <ops@example\.com>; 0 dashboard sessions ended/);
    expect(ok.screen).not.toContain(PASSWORD);
    const differ = await cliOnTerminal(['users', 'set-password', 'ops@example.com'], [PASSWORD, 'something else entirely']);
    expect(differ.code).toBe(1);
    expect(differ.screen).toContain('the two passwords differ: nothing changed');
    expect(differ.screen).not.toContain('something else');
  });

  it('makes a reset link on the address the gateway would listen on, and says it is loopback-only', async () => {
    const r = await cli(['users', 'reset-link', 'ops@example.com', '--expires-in', '90']);
    expect(r.code).toBe(0);
    const [url, blank, about, loopback] = r.stdout.trimEnd().split('\n');
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:8099\/reset-password\?token=[0-9A-Za-z]{43}$/);
    expect(blank).toBe('');
    expect(about).toMatch(/^single-use link for user usr_\w+ <ops@example\.com>, valid until \S+Z\. Give it to that user only: whoever opens it can set the password\.$/);
    expect(loopback).toBe('It points at a loopback address, which only this machine can open: set public_url in the config to the address users reach.');
    const bad = await cli(['users', 'reset-link', 'ops@example.com', '--expires-in', '2h']);
    expect(bad).toMatchObject({ code: 1, stderr: "--expires-in must be a whole number of minutes from 5 to 10080 (7 days), not '2h'\n" });
  });
});

describe('through a running gateway', () => {
  let url: string;
  beforeAll(async () => {
    server = spawn(process.execPath, [bin, 'serve'], { env: { ...env, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    server.stdout!.on('data', (d) => (log += d));
    server.stderr!.on('data', (d) => (log += d));
    const info = path.join(dataDir, 'server.json');
    for (let i = 0; i < 600 && !existsSync(info); i++) await new Promise((r) => setTimeout(r, 100));
    if (!existsSync(info)) throw new Error(`server did not start:\n${log}`);
    url = JSON.parse(readFileSync(info, 'utf8')).url;
  });

  it('sets a password (ending the user’s sessions) and makes a link the user can use', async () => {
    const b = new Browser(url);
    expect((await b.signIn('ops@example.com', PASSWORD)).status).toBe(303);
    const set = await cli(['users', 'set-password', 'ops@example.com', '--json'], 'a different good one\n');
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ user: { email: 'ops@example.com' }, sessions_ended: 1 });
    expect((await b.get('/v1/session')).status).toBe(401);

    const link = JSON.parse((await cli(['users', 'reset-link', 'ops@example.com', '--json'])).stdout) as { url: string };
    expect(link.url.startsWith(`${url}/reset-password?token=`)).toBe(true);
    const r = new Browser(url);
    const form = Browser.fields(await (await r.get(link.url)).text());
    expect((await r.post('/reset-password', { ...form, password: PASSWORD, confirm: PASSWORD })).status).toBe(303);
    expect((await new Browser(url).signIn('ops@example.com', PASSWORD)).status).toBe(303);
  });

  it('says where the admin token is when it is wrong or missing', async () => {
    const wrong = await cli(['users', 'list'], '', { ...env, GATEWAY_ADMIN_TOKEN: 'mga-not-the-token' });
    expect(wrong).toMatchObject({
      code: 1,
      stderr: `${url} refused the admin token (401 invalid_admin_token) the CLI read from GATEWAY_ADMIN_TOKEN. The gateway's token is in its DATA_DIR/admin-token (with PostgreSQL, that of the instance that created it), or is its GATEWAY_ADMIN_TOKEN when it was started with one: set GATEWAY_ADMIN_TOKEN to that one.\n`,
    });
    const elsewhere = mkdtempSync(path.join(tmpdir(), 'mg-cli-'));
    try {
      const missing = await cli(['users', 'list'], '', { ...env, DATA_DIR: elsewhere, GATEWAY_URL: url });
      expect(missing).toMatchObject({
        code: 1,
        stderr: `no admin token to call ${url}: the CLI reads GATEWAY_ADMIN_TOKEN, else ${elsewhere}/admin-token, which does not exist. The gateway's token is in its DATA_DIR/admin-token (with PostgreSQL, that of the instance that created it), or is its GATEWAY_ADMIN_TOKEN when it was started with one: set GATEWAY_ADMIN_TOKEN to it, or run the CLI with the gateway's DATA_DIR.\n`,
      });
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
