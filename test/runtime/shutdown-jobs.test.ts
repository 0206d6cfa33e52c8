// A graceful stop gives running jobs back (decision 0029): the instance stopped with SIGTERM
// mid-job releases its lease at once, so the other instance runs the job now rather than when the
// lease would have run out, and bills it once.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { randomToken } from '../../server/runtime/secrets.ts';
import { TEST_REDIS_URL, freshPostgres } from '../helpers/gateway.ts';
import { ENGINE_FLAGS } from '../helpers/engine-flags.ts';
import { jobTestConfig } from '../jobs/fixtures/test-kind.ts';

type Instance = { child: ChildProcess; url: string; test: string; exited: Promise<number | null> };

let db: Awaited<ReturnType<typeof freshPostgres>>;
let work: string;
let env: NodeJS.ProcessEnv;
const adminToken = `mga-${randomToken(30)}`;
const instances: Instance[] = [];

/** test/jobs/fixtures/instance.ts: a gateway with the test job kind; SIGTERM closes it as `serve` does. */
async function startInstance(name: string): Promise<Instance> {
  const child = spawn(process.execPath, [...ENGINE_FLAGS, '--import', 'tsx', path.join(import.meta.dirname, '../jobs/fixtures/instance.ts')], {
    env: { ...env, DATA_DIR: path.join(work, name) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stderr!.on('data', (d) => (log += d));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    void exited.then(() => reject(new Error(`instance ${name} exited: ${log}`)));
  });
  const inst = { child, exited, ...(JSON.parse(line) as { url: string; test: string }) };
  instances.push(inst);
  return inst;
}

beforeAll(async () => {
  db = await freshPostgres();
  work = mkdtempSync(path.join(tmpdir(), 'mg-shutdown-jobs-'));
  const config = path.join(work, 'gateway.config.yaml');
  writeFileSync(config, jobTestConfig);
  env = {
    ...process.env,
    DATABASE_URL: db.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `mgtest:${randomToken(6)}:`,
    GATEWAY_CONFIG: config,
    GATEWAY_ADMIN_TOKEN: adminToken,
    GATEWAY_SECRET: randomToken(32),
    GATEWAY_METADATA_FETCH: 'off',
    // A lease far longer than the test: only a lease given back lets the other instance run the job.
    JOB_LEASE_MS: '60000',
    JOB_POLL_MS: '100',
    HOST: '127.0.0.1',
    PORT: '0',
  };
}, 60_000);

afterAll(async () => {
  for (const i of instances) i.child.kill('SIGKILL');
  await Promise.all(instances.map((i) => i.exited));
  await db?.drop();
  rmSync(work, { recursive: true, force: true });
});

async function sql<T>(q: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    return (await c.query(q, params)).rows as T[];
  } finally {
    await c.end();
  }
}

it('an instance stopped with SIGTERM mid-job gives the lease back: the other runs the job at once and bills it once', async () => {
  const [a, b] = await Promise.all([startInstance('a'), startInstance('b')]);
  const h = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
  const email = `jobs-${randomToken(6)}@example.com`;
  await fetch(`${a.url}/admin/v1/users`, { method: 'POST', headers: h, body: JSON.stringify({ email }) });
  const { key } = (await (await fetch(`${a.url}/admin/v1/keys`, { method: 'POST', headers: h, body: JSON.stringify({ user: email }) })).json()) as { key: string };
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const job = (await (await fetch(`${a.test}/test/jobs`, { method: 'POST', headers: auth, body: JSON.stringify({ images: 1, ms: 3000, text: 'given back' }) })).json()) as { id: string };
  let holder: string | undefined;
  for (let n = 0; n < 100 && !holder; n++, await sleep(50)) holder = (await sql<{ locked_by: string | null }>('SELECT locked_by FROM jobs WHERE id = $1', [job.id]))[0]?.locked_by ?? undefined;
  expect(holder).toBeTruthy();
  // The instance holding it: each answers its runner id on /test/runner.
  const held = await Promise.all([a, b].map(async (i) => (await (await fetch(`${i.test}/test/runner`)).text()) === holder));
  const [stopped, survivor] = held[0] ? [a, b] : [b, a];
  const sent = Date.now();
  stopped.child.kill('SIGTERM');
  expect(await stopped.exited).toBe(0);
  const stopMs = Date.now() - sent;
  // The lease was given back: released, not waiting out its 60 s.
  const [released] = await sql<{ locked_by: string | null; attempts: number }>('SELECT locked_by, attempts FROM jobs WHERE id = $1', [job.id]);
  expect(released!.locked_by === holder).toBe(false);
  let status = '';
  for (let n = 0; n < 200 && status !== 'done'; n++, await sleep(50)) status = (await sql<{ status: string }>('SELECT status FROM jobs WHERE id = $1', [job.id]))[0]!.status;
  expect(status).toBe('done');
  const tookMs = Date.now() - sent;
  expect(tookMs).toBeLessThan(15_000);
  const download = await fetch(`${survivor.test}/test/jobs/${job.id}/download`, { headers: auth });
  expect(await download.text()).toBe('given back');
  // Claimed twice, counted once (the run given back does not count as an interruption); billed once.
  const [after] = await sql<{ attempts: number }>('SELECT attempts FROM jobs WHERE id = $1', [job.id]);
  expect(after!.attempts).toBe(1);
  let rows: { n: number }[] = [];
  for (let n = 0; n < 50 && !rows[0]?.n; n++, await sleep(100)) rows = await sql('SELECT count(*)::int AS n FROM usage_records WHERE request_id = $1', [job.id]);
  expect(rows[0]!.n).toBe(1);
  console.log(`job given back at SIGTERM: the instance stopped in ${stopMs} ms, the job was done on the other ${tookMs} ms after the signal (lease: 60 s)`);
}, 60_000);
