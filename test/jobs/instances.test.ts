// Jobs across processes on PostgreSQL + Redis + an S3-compatible store (issue 17): a job submitted on one instance is
// polled and downloaded on another; an instance killed with SIGKILL mid-job leaves nothing stuck —
// the other claims the job when its lease runs out, finishes it, bills it once and frees its slot.
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
import { jobTestConfig } from './fixtures/test-kind.ts';
import { startS3 } from '../helpers/s3.ts';

type Instance = { child: ChildProcess; url: string; test: string; closed: Promise<void> };

let db: Awaited<ReturnType<typeof freshPostgres>>;
let work: string;
let env: NodeJS.ProcessEnv;
const adminToken = `adm_${randomToken(24)}`;
const instances: Instance[] = [];

async function startInstance(name: string): Promise<Instance> {
  const child = spawn(process.execPath, [...ENGINE_FLAGS, '--import', 'tsx', path.join(import.meta.dirname, 'fixtures/instance.ts')], {
    env: { ...env, DATA_DIR: path.join(work, name) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stderr!.on('data', (d) => (log += d));
  const closed = new Promise<void>((r) => child.on('close', () => r()));
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    void closed.then(() => reject(new Error(`instance ${name} exited: ${log}`)));
  });
  const inst = { child, closed, ...(JSON.parse(line) as { url: string; test: string }) };
  instances.push(inst);
  return inst;
}

let s3: Awaited<ReturnType<typeof startS3>>;

beforeAll(async () => {
  s3 = await startS3();
  db = await freshPostgres();
  work = mkdtempSync(path.join(tmpdir(), 'mg-jobs-'));
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
    // Outputs in the S3-compatible store both instances share.
    ...s3.env,
    JOB_POLL_MS: '50',
    JOB_LEASE_MS: '1000',
    HOST: '127.0.0.1',
    PORT: '0',
  };
}, 60_000);

afterAll(async () => {
  for (const i of instances) i.child.kill('SIGKILL');
  await Promise.all(instances.map((i) => i.closed));
  await db?.drop();
  await s3?.close();
  rmSync(work, { recursive: true, force: true });
});

async function newKey(on: Instance): Promise<string> {
  const h = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
  const email = `jobs-${randomToken(6)}@example.com`;
  await fetch(`${on.url}/admin/v1/users`, { method: 'POST', headers: h, body: JSON.stringify({ email }) });
  return ((await (await fetch(`${on.url}/admin/v1/keys`, { method: 'POST', headers: h, body: JSON.stringify({ user: email }) })).json()) as { key: string }).key;
}
const submit = (on: Instance, key: string, body: object) =>
  fetch(`${on.test}/test/jobs`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
const get = (on: Instance, key: string, p: string) => fetch(`${on.test}${p}`, { headers: { authorization: `Bearer ${key}` } });
async function poll(on: Instance, key: string, id: string, until: (status: string) => boolean, ms = 15_000): Promise<any> {
  const end = Date.now() + ms;
  for (;;) {
    const job: any = await (await get(on, key, `/test/jobs/${id}`)).json();
    if (until(job.status) || Date.now() > end) return job;
    await sleep(50);
  }
}
async function sql<T>(q: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    return (await c.query(q, params)).rows as T[];
  } finally {
    await c.end();
  }
}
const usage = async (on: Instance, key: string) => ((await (await fetch(`${on.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()) as any).limits;

it('submitted on one instance, polled and downloaded on the other; killed mid-job, finished by the survivor and billed once', async () => {
  const a = await startInstance('a');
  const b = await startInstance('b');
  const key = await newKey(a);

  // Across instances: submit on A, read on B.
  const first: any = await (await submit(a, key, { images: 1, text: 'made on one, read on the other' })).json();
  expect((await poll(b, key, first.id, (s) => s === 'done')).status).toBe('done');
  const dl = await get(b, key, `/test/jobs/${first.id}/download`);
  expect(await dl.text()).toBe('made on one, read on the other');

  // A long job; whichever instance claims it is killed with SIGKILL mid-run.
  const job: any = await (await submit(b, key, { images: 2, ms: 2500, text: 'survived a crash' })).json();
  await poll(a, key, job.id, (s) => s === 'in_progress');
  const [claim] = await sql<{ locked_by: string; attempts: number }>('SELECT locked_by, attempts FROM jobs WHERE id = $1', [job.id]);
  expect(claim!.attempts).toBe(1);
  // The process holding the lease is killed.
  const holder = await whichHolds(claim!.locked_by, [a, b]);
  const survivor = holder === a ? b : a;
  holder.child.kill('SIGKILL');
  await holder.closed;

  const done = await poll(survivor, key, job.id, (s) => s === 'done' || s === 'failed', 20_000);
  expect(done.status).toBe('done');
  expect(await (await get(survivor, key, `/test/jobs/${job.id}/download`)).text()).toBe('survived a crash');
  // The survivor's ledger writes every second.
  let ledger: { billed_tokens: string; metered_quantity: number }[] = [];
  for (let n = 0; n < 50 && !ledger.length; n++, await sleep(100)) ledger = await sql('SELECT billed_tokens, metered_quantity FROM usage_records WHERE request_id = $1', [job.id]);
  expect(ledger).toEqual([{ billed_tokens: '4000', metered_quantity: 2 }]);
  const [after] = await sql<{ attempts: number; status: string }>('SELECT attempts, status FROM jobs WHERE id = $1', [job.id]);
  expect(after).toEqual({ attempts: 2, status: 'done' });
  // Quota: both jobs settled (1 image + 2 images, × multiplier 2), nothing left reserved; no job slot held.
  const limits = await usage(survivor, key);
  expect(limits.daily_tokens.used).toBe(6000);
  expect(limits.concurrent_jobs).toEqual({ limit: 3, active: 0, remaining: 3 });
}, 60_000);

/** The instance whose runner holds `lockedBy`: each instance's runner id is in its lease rows only. */
async function whichHolds(lockedBy: string, candidates: Instance[]): Promise<Instance> {
  for (const c of candidates) {
    const res = await fetch(`${c.test}/test/runner`);
    if (res.ok && (await res.text()) === lockedBy) return c;
  }
  throw new Error(`no instance holds ${lockedBy}`);
}
