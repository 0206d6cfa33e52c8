// Two instances started exactly as the README's "PostgreSQL and Redis" section says — the same
// DATABASE_URL and REDIS_URL, a DATA_DIR each, nothing else shared: no GATEWAY_SECRET, no
// GATEWAY_ADMIN_TOKEN, no BLOB_DIR, no S3 (issue 30, decision 0020). What one instance takes in,
// the other serves: transcription jobs submitted on either run on both and are polled and
// downloaded on the other, an image's hosted link works through the other, the admin token the
// first instance made opens the other's admin API. Each instance is `model-gateway serve` in a
// process of its own; besides the README's variables the test sets only where to listen
// (PORT, HOST), its config file (a fake upstream), a Redis key prefix of its own and no metadata fetch.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { randomToken } from '../../server/runtime/secrets.ts';
import { TEST_REDIS_URL, freshPostgres } from '../helpers/gateway.ts';
import { PNG } from '../media/fake-media.ts';
import { whisperAnswer } from '../transcription/fake-stt.ts';

const bin = new URL('../../bin/model-gateway.mjs', import.meta.url).pathname;
const WAV = readFileSync(new URL('../fixtures/audio/speech.wav', import.meta.url));
const VTT =
  'WEBVTT\n\n00:00:00.120 --> 00:00:01.400\nHello from the gateway.\n\n00:00:01.620 --> 00:00:03.500\nThis is a test of speech to text.\n\n00:00:03.900 --> 00:00:04.600\nGoodbye.\n';

type Instance = { name: string; child: ChildProcess; url: string; dataDir: string; logs: () => Record<string, unknown>[]; exited: Promise<void> };

let work: string;
let db: Awaited<ReturnType<typeof freshPostgres>>;
let upstream: Server;
let upstreamUrl: string;
/** The job runners (one per instance) holding the jobs running while the fake upstream answers. */
const runners = new Set<string>();
let sql: pg.Client;
const audioReceived: Buffer[] = [];
let readmeEnv: NodeJS.ProcessEnv;
const instances: Instance[] = [];

/**
 * A transcription takes the fake 700 ms: long enough that a second job finds the first instance
 * busy. Meanwhile it notes which instances' runners hold the running jobs (the lease's holder).
 */
async function startUpstream(): Promise<void> {
  upstream = createServer((req, res) => void (async () => {
    const chunks: Buffer[] = [];
    try {
      for await (const c of req) chunks.push(c as Buffer);
    } catch {
      return; // the gateway gave the request up (its upload failed part-way): nobody to answer
    }
    const send = (body: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.url === '/v1/audio/transcriptions') {
      const form = await new Response(Buffer.concat(chunks), { headers: { 'content-type': String(req.headers['content-type']) } }).formData();
      audioReceived.push(Buffer.from(await (form.get('file') as File).arrayBuffer()));
      const held = await sql.query<{ locked_by: string }>("SELECT locked_by FROM jobs WHERE status = 'in_progress' AND locked_by IS NOT NULL");
      for (const r of held.rows) runners.add(r.locked_by);
      await sleep(700);
      return send(whisperAnswer);
    }
    if (req.url === '/v1/images/generations') {
      return send({ created: 1770935251, data: [{ b64_json: PNG.toString('base64') }], usage: { input_tokens: 10, output_tokens: 1056, total_tokens: 1066 } });
    }
    res.writeHead(404).end();
  })());
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
}

/** `model-gateway serve` (what `npm start` runs) with the README's variables and this DATA_DIR. */
async function startInstance(name: string): Promise<Instance> {
  const dataDir = path.join(work, name);
  const child = spawn(process.execPath, [bin, 'serve'], { env: { ...readmeEnv, DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const info = path.join(dataDir, 'server.json');
  for (let i = 0; i < 600 && !existsSync(info) && child.exitCode === null; i++) await sleep(100);
  if (!existsSync(info)) throw new Error(`instance ${name} did not start:\n${out}\n${err}`);
  const inst: Instance = {
    name,
    child,
    dataDir,
    exited,
    url: JSON.parse(readFileSync(info, 'utf8')).url,
    logs: () =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
  instances.push(inst);
  return inst;
}

const run = promisify(execFile);
const cli = async (...args: string[]) => JSON.parse((await run(process.execPath, [bin, ...args, '--json'], { env: { ...readmeEnv, DATA_DIR: path.join(work, 'a') } })).stdout);

let a: Instance;
let b: Instance;
let key: string;

beforeAll(async () => {
  db = await freshPostgres();
  sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  await startUpstream();
  work = mkdtempSync(path.join(tmpdir(), 'mg-readme-'));
  const config = path.join(work, 'gateway.config.yaml');
  writeFileSync(
    config,
    `
providers:
  - { id: openai, type: openai, base_url: "${upstreamUrl}/v1", api_key: openai-key }
models:
  - { id: whisper-1, endpoint: transcription, upstreams: [{ provider: openai, model: whisper-1 }] }
  - { id: gpt-image-1, endpoint: images, upstreams: [{ provider: openai, model: gpt-image-1 }] }
plans:
  - { id: free, rank: 0, daily_tokens: 10000000, requests_per_minute: 10000, max_concurrent_jobs: 10 }
# One job at a time per instance: a second one submitted meanwhile runs on the other instance.
jobs: { retention_hours: 1, concurrency: 1 }
`,
  );
  // Only what the README names, and what a test must set: nothing inherited from this process.
  readmeEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATABASE_URL: db.url,
    REDIS_URL: TEST_REDIS_URL,
    PORT: '0',
    HOST: '127.0.0.1',
    GATEWAY_CONFIG: config,
    REDIS_KEY_PREFIX: `mgtest:${randomToken(6)}:`,
    GATEWAY_METADATA_FETCH: 'off',
    LOG_FORMAT: 'json',
    // One process per instance (the default with both stores is one per core): the test counts
    // which instances' runners took the jobs.
    WORKERS: '1',
  };
  a = await startInstance('a');
  b = await startInstance('b');
  await cli('users', 'create', '--email', 'readme@example.com');
  key = (await cli('keys', 'create', '--user', 'readme@example.com')).key;
}, 240_000);

afterAll(async () => {
  for (const i of instances) i.child.kill('SIGTERM');
  await Promise.all(instances.map((i) => i.exited));
  await new Promise((r) => upstream?.close(r));
  await sql?.end();
  await db?.drop();
  if (work) rmSync(work, { recursive: true, force: true });
});

const messages = (i: Instance, level?: number) => i.logs().filter((l) => level === undefined || l.level === level).map((l) => String(l.msg));

it('start-up says where the secret and the blobs are, with no warning: the README way shares all that must be shared', () => {
  expect(messages(a)).toContain('secret: from the database (created by this instance; shared by every instance)');
  expect(messages(b)).toContain('secret: from the database (shared by every instance)');
  for (const i of [a, b]) {
    expect(messages(i)).toContain('blob store (uploads, job outputs, hosted files): PostgreSQL (shared by every instance; S3_BUCKET is better for large volumes)');
    expect(messages(i, 40), `${i.name}'s warnings`).toEqual([]);
  }
  expect(messages(a)).toContain(`admin API: token in ${path.join(a.dataDir, 'admin-token')}, accepted by every instance (its hash is kept in the database)`);
  expect(messages(b)).toContain("admin API: the deployment's token (in the DATA_DIR/admin-token of the instance that created it; its hash is kept in the database)");
  expect(existsSync(path.join(b.dataDir, 'admin-token'))).toBe(false);
  expect(existsSync(path.join(b.dataDir, 'secret'))).toBe(false);
});

async function submit(on: Instance): Promise<string> {
  const form = new FormData();
  form.set('model', 'whisper-1');
  form.set('response_format', 'vtt');
  form.set('file', new Blob([WAV]), 'speech.wav');
  const res = await fetch(`${on.url}/v1/audio/transcriptions/jobs`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  expect(res.status).toBe(202);
  return ((await res.json()) as { id: string }).id;
}

async function settled(on: Instance, id: string): Promise<Record<string, unknown>> {
  const end = Date.now() + 60_000;
  for (;;) {
    const job = (await (await fetch(`${on.url}/v1/audio/transcriptions/jobs/${id}/status`, { headers: { authorization: `Bearer ${key}` } })).json()) as Record<string, unknown>;
    if (job.status === 'done' || job.status === 'failed' || Date.now() > end) return job;
    await sleep(100);
  }
}

it.each([
  ['a', 'b'],
  ['b', 'a'],
])('transcription jobs submitted on %s run on both instances, and %s answers their status and downloads', async (from, to) => {
  const [submitOn, readOn] = from === 'a' ? [a, b] : [b, a];
  runners.clear();
  audioReceived.length = 0;
  const ids = await Promise.all([submit(submitOn), submit(submitOn), submit(submitOn)]);
  const jobs = await Promise.all(ids.map((id) => settled(readOn, id)));
  expect(jobs.map((j) => [j.status, j.error])).toEqual(ids.map(() => ['done', null]));
  // Both instances ran some (one job at a time each): the one that did not take the uploads read
  // them from the shared store.
  expect(runners.size).toBe(2);
  expect(audioReceived).toEqual([WAV, WAV, WAV]);
  for (const id of ids) {
    const res = await fetch(`${readOn.url}/v1/audio/transcriptions/jobs/${id}/download`, { headers: { authorization: `Bearer ${key}` } });
    expect([res.status, res.headers.get('content-type'), await res.text()]).toEqual([200, 'text/vtt; charset=utf-8', VTT]);
  }
}, 120_000);

it("an image's hosted link made by one instance is served by the other", async () => {
  const res = await fetch(`${a.url}/v1/images/generations`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-image-1', prompt: 'a lighthouse' }) });
  expect(res.status).toBe(200);
  const url = new URL(((await res.json()) as { data: { url: string }[] }).data[0]!.url);
  expect(url.origin).toBe(a.url);
  const other = await fetch(`${b.url}${url.pathname}`);
  expect([other.status, other.headers.get('content-type'), Buffer.from(await other.arrayBuffer())]).toEqual([200, 'image/png', PNG]);
});

it("the admin token the first instance wrote to its DATA_DIR opens the other's admin API; another token does not", async () => {
  const token = readFileSync(path.join(a.dataDir, 'admin-token'), 'utf8').trim();
  const users = await fetch(`${b.url}/admin/v1/users`, { headers: { authorization: `Bearer ${token}` } });
  expect(users.status).toBe(200);
  expect(((await users.json()) as { data: { email: string }[] }).data.map((u) => u.email)).toEqual(['readme@example.com']);
  const wrong = await fetch(`${b.url}/admin/v1/users`, { headers: { authorization: `Bearer mga-${randomToken(43)}` } });
  expect([wrong.status, ((await wrong.json()) as { error: { code: string } }).error.code]).toEqual([401, 'invalid_admin_token']);
});
