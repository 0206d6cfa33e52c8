// What an operator sees in the terminal: `serve` logs one readable line per event when asked for
// (or when stdout is a terminal), JSON lines otherwise, one line per request either way.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { freshDataDir, minimalConfig } from '../helpers/gateway.ts';

const bin = new URL('../../bin/model-gateway.mjs', import.meta.url).pathname;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Runs `serve` with `extra` env, makes the requests, stops it and returns everything it printed. */
async function serveAndLog(extra: NodeJS.ProcessEnv, requests: string[] = []): Promise<{ out: string; code: number | null }> {
  const dataDir = freshDataDir();
  dirs.push(dataDir);
  const config = path.join(dataDir, 'gateway.config.yaml');
  writeFileSync(config, minimalConfig);
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, GATEWAY_METADATA_FETCH: 'off', DATA_DIR: dataDir, GATEWAY_CONFIG: config, PORT: '0', HOST: '127.0.0.1', ...extra };
  const child = spawn(process.execPath, [bin, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  // 'close', not 'exit': the last lines may still be in the pipe when the process exits.
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  const info = path.join(dataDir, 'server.json');
  for (let i = 0; i < 300 && !existsSync(info) && child.exitCode === null; i++) await new Promise((r) => setTimeout(r, 100));
  if (existsSync(info)) {
    const url = JSON.parse(readFileSync(info, 'utf8')).url as string;
    for (const r of requests) await (await fetch(url + r)).text();
    // A request's line is written once its response has gone: wait for the last one, and for the
    // SIGTERM handler (installed when start-up finished, after server.json).
    const last = requests.at(-1)?.split('?')[0];
    for (let i = 0; i < 50 && (!out.includes('admin API') || (last && !out.includes(`GET ${last}`))); i++) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 100));
    child.kill('SIGTERM');
  }
  return { out, code: await exited };
}

it('LOG_FORMAT=pretty: one plain line per event and per request, time first, no JSON braces for the message', async () => {
  const { out } = await serveAndLog({ LOG_FORMAT: 'pretty' }, ['/v1/models', '/v1/nope?token=abc']);
  const lines = out.split('\n').filter(Boolean);
  expect(lines.some((l) => /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: model-gateway \d+\.\d+\.\d+ listening on http:\/\/127\.0\.0\.1:\d+/.test(l))).toBe(true);
  const requestLines = lines.filter((l) => / (GET|POST) \//.test(l));
  expect(requestLines).toHaveLength(2);
  expect(requestLines[0]).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: GET \/v1\/models 200 [\d.]+ ms \{"reqId":"req_\w+"\}$/);
  expect(requestLines[1]).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: GET \/v1\/nope\?token=redacted 404 not_found [\d.]+ ms \{"reqId":"req_\w+","code":"not_found"\}$/);
  // Not a terminal, so no colour codes.
  expect(out).not.toContain('\u001b[');
});

it('LOG_FORMAT=json (the default off a terminal): JSON lines, one per request, with the fields behind the message', async () => {
  for (const env of [{ LOG_FORMAT: 'json' }, {}]) {
    const { out } = await serveAndLog(env, ['/v1/models']);
    const records = out
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    const requests = records.filter((r) => r.http);
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ level: 30, msg: expect.stringMatching(/^GET \/v1\/models 200 [\d.]+ ms$/), http: { method: 'GET', url: '/v1/models', status: 200, ip: '127.0.0.1' } });
    expect(records.some((r) => r.msg === 'incoming request' || r.msg === 'request completed')).toBe(false);
  }
});

it('a broken config reads as lines in the pretty format, not one JSON line with \\n escaped', async () => {
  const dataDir = freshDataDir();
  dirs.push(dataDir);
  const { out, code } = await serveAndLog({ LOG_FORMAT: 'pretty', GATEWAY_CONFIG: path.join(dataDir, 'missing.yaml') });
  expect(code).toBe(1);
  expect(out).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] FATAL: cannot start: /m);
  expect(out).not.toContain('"level"');
});

it('an unknown LOG_FORMAT stops start-up with a clear message', async () => {
  const { out, code } = await serveAndLog({ LOG_FORMAT: 'fancy' });
  expect(code).toBe(1);
  expect(out.trim()).toBe("cannot start: LOG_FORMAT must be 'json' or 'pretty', not 'fancy'.");
});
