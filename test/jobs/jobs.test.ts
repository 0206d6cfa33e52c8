// The async job system (issue 17) through HTTP, driven by a job kind only these tests register
// (so every path of the runner can be steered): lifecycle, access rules, the
// concurrent-job cap, billing settled once, a dead instance's job picked up, expiry.
import type { FastifyInstance } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomToken } from '../../server/runtime/secrets.ts';
import { UrlSigner } from '../../server/blobs/signed-url.ts';
import { jobTestConfig, jobTestRoutes, runs, testKind, type TestRequest } from './fixtures/test-kind.ts';
import { keyCounters, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

let gw: TestGateway;
let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  gw = await startTestGateway({ config: jobTestConfig, jobKinds: [testKind], env: { JOB_POLL_MS: '25', JOB_LEASE_MS: '400' } });
  app = jobTestRoutes(gw.services);
  base = await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await app?.close();
  await gw?.close();
});

const submit = (key: string, body: TestRequest) => fetch(`${base}/test/jobs`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
const get = (key: string, path: string) => fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
const keyIdOf = async (key: string) => (await gw.services.keys.authenticate(key))!.keyId;
const counters = (keyId: string) => keyCounters(gw.services, keyId);
const ledger = async (jobId: string) => {
  await gw.services.ledger.flush();
  return gw.services.db.prisma.usageRecord.findMany({ where: { requestId: jobId } });
};
async function until<T>(what: () => Promise<T>, done: (v: T) => boolean, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await what();
    if (done(v) || Date.now() > end) return v;
    await sleep(20);
  }
}
const finished = (key: string, id: string) => until(async () => (await get(key, `/test/jobs/${id}`)).json() as Promise<any>, (j) => j.status === 'done' || j.status === 'failed');

describe('lifecycle', () => {
  it('submit → queued/in_progress → done; 409 before done; the output after; billing settled once to the units made', async () => {
    const key = await gw.newKey();
    const keyId = await keyIdOf(key);
    const res = await submit(key, { ms: 600, images: 3, text: 'three images' });
    expect(res.status).toBe(202);
    const job: any = await res.json();
    expect(job).toMatchObject({ object: 'image.generation.job', status: 'queued', model: 'image-model', started_at: null, completed_at: null, error: null, result: null, download_url: `/test/jobs/${job.id}/download` });
    expect(job.id).toMatch(/^job_[A-Za-z0-9]{24}$/);
    expect(job.expires_at - job.created_at).toBe(3600);
    // Reserved at submission: 3 images × 1000 × multiplier 2; one job slot taken.
    expect(await counters(keyId)).toEqual({ settled: 0, reserved: 2000 * 3, activeJobs: 1 });

    const running: any = await until(async () => (await get(key, `/test/jobs/${job.id}`)).json() as Promise<any>, (j) => j.status === 'in_progress');
    expect(running.status).toBe('in_progress');
    expect(running.started_at).toBeGreaterThanOrEqual(job.created_at);
    const early = await get(key, `/test/jobs/${job.id}/download`);
    expect(early.status).toBe(409);
    expect(await early.json()).toEqual({ error: { message: 'The job is in_progress; its output can be downloaded once it is done.', type: 'invalid_request_error', code: 'job_not_ready', param: 'id' } });

    const done = await finished(key, job.id);
    expect(done).toMatchObject({ status: 'done', result: { created: 1, state: null }, warnings: ['size 1000x1000 changed to 1024x1024'], pronunciation_warnings: [], error: null });
    const dl = await get(key, `/test/jobs/${job.id}/download`);
    expect(dl.status).toBe(200);
    expect(dl.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(dl.headers.get('content-length')).toBe('12');
    expect(await dl.text()).toBe('three images');
    expect(await counters(keyId)).toEqual({ settled: 6000, reserved: 0, activeJobs: 0 });
    const rows = await ledger(job.id);
    expect(rows.map((r) => [r.endpoint, r.meteredUnit, r.meteredQuantity, Number(r.billedTokens), r.status])).toEqual([['images', 'image', 3, 6000, 200]]);
  });

  it('only the creating key may poll or download (403); unknown ids are 404 job_not_found', async () => {
    const key = await gw.newKey();
    const other = await gw.newKey();
    const job: any = await (await submit(key, {})).json();
    for (const path of [`/test/jobs/${job.id}`, `/test/jobs/${job.id}/download`]) {
      const r = await get(other, path);
      expect(r.status).toBe(403);
      expect(((await r.json()) as any).error).toMatchObject({ type: 'permission_error', code: 'unauthorized_job_access' });
    }
    const missing = await get(key, `/test/jobs/job_${randomToken(24)}`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as any).error).toMatchObject({ type: 'invalid_request_error', code: 'job_not_found' });
    await finished(key, job.id);
  });

  it('a failed job keeps its error body, bills nothing and frees its slot and reservation', async () => {
    const key = await gw.newKey();
    const keyId = await keyIdOf(key);
    const job: any = await (await submit(key, { fail: true, images: 2 })).json();
    const failed = await finished(key, job.id);
    expect(failed).toMatchObject({ status: 'failed', error: { type: 'provider_error', code: 'upstream_error', message: "provider 'openai': the image was refused" } });
    expect((await get(key, `/test/jobs/${job.id}/download`)).status).toBe(409);
    expect(await counters(keyId)).toEqual({ settled: 0, reserved: 0, activeJobs: 0 });
    // Recorded as a failed request, billed nothing.
    expect((await ledger(job.id)).map((r) => [Number(r.billedTokens), r.status, r.errorCode])).toEqual([[0, 502, 'upstream_error']]);
  });

  it('a long upstream operation is re-checked later with its saved state, holding no worker meanwhile', async () => {
    const key = await gw.newKey();
    const job: any = await (await submit(key, { recheck: true })).json();
    const done = await finished(key, job.id);
    expect(done).toMatchObject({ status: 'done', result: { state: { operation: 'op-1' } } });
    expect(runs.filter((id) => id === job.id)).toHaveLength(2);
  });
});

describe('the concurrent job cap', () => {
  it('admits exactly max_concurrent_jobs of 10× as many submitted at once; the rest get 429 too_many_active_jobs', async () => {
    const key = await gw.newKey();
    const results = await Promise.all(Array.from({ length: 30 }, () => submit(key, { ms: 400 })));
    const accepted = results.filter((r) => r.status === 202);
    expect(accepted).toHaveLength(3);
    const refused = results.filter((r) => r.status === 429);
    expect(refused).toHaveLength(27);
    const body: any = await refused[0]!.json();
    expect(body.error).toMatchObject({ type: 'rate_limit_error', code: 'too_many_active_jobs', limit: 3, remaining: 0 });
    expect(refused[0]!.headers.get('retry-after')).toMatch(/^\d+$/);
    for (const r of accepted) await finished(key, ((await r.json()) as { id: string }).id);
    expect((await submit(key, {})).status).toBe(202);
  });
});

describe('a dead instance', () => {
  it('its job is claimed again when the lease runs out and finishes once: one ledger row, slot and reservation released', async () => {
    const key = await gw.newKey();
    const keyId = await keyIdOf(key);
    const job: any = await (await submit(key, { images: 2, ms: 50 })).json();
    // Another instance claimed it and died: its lease is still running.
    await gw.services.db.prisma.job.update({ where: { id: job.id }, data: { status: 'in_progress', lockedBy: 'run_dead', lockedUntil: new Date(Date.now() + 300), attempts: 1, startedAt: new Date() } });
    await sleep(100);
    expect(((await (await get(key, `/test/jobs/${job.id}`)).json()) as any).status).toBe('in_progress');
    const done = await finished(key, job.id);
    expect(done.status).toBe('done');
    expect(await counters(keyId)).toEqual({ settled: 4000, reserved: 0, activeJobs: 0 });
    expect(await ledger(job.id)).toHaveLength(1);
  });

  it('a job whose instances keep dying is given up after 3 claims, with nothing billed', async () => {
    const key = await gw.newKey();
    const keyId = await keyIdOf(key);
    const job: any = await (await submit(key, { ms: 50 })).json();
    await gw.services.db.prisma.job.update({ where: { id: job.id }, data: { status: 'in_progress', lockedBy: 'run_dead', lockedUntil: new Date(Date.now() - 1), attempts: 3 } });
    const failed = await finished(key, job.id);
    expect(failed).toMatchObject({ status: 'failed', error: { type: 'server_error', code: 'job_interrupted' } });
    expect(await counters(keyId)).toEqual({ settled: 0, reserved: 0, activeJobs: 0 });
    expect((await ledger(job.id)).map((r) => [Number(r.billedTokens), r.status, r.errorCode])).toEqual([[0, 500, 'job_interrupted']]);
  });
});

describe('expiry', () => {
  it('after expires_at the job is 404 and the sweeper deletes its output', async () => {
    const key = await gw.newKey();
    const job: any = await (await submit(key, { text: 'soon gone' })).json();
    await finished(key, job.id);
    const row = await gw.services.db.prisma.job.findUniqueOrThrow({ where: { id: job.id } });
    expect(await gw.services.jobs.blobs.get(row.outputKey!)).not.toBeNull();
    await gw.services.db.prisma.job.update({ where: { id: job.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect((await get(key, `/test/jobs/${job.id}`)).status).toBe(404);
    expect(await gw.services.jobRunner.sweep()).toBeGreaterThanOrEqual(1);
    expect(await gw.services.jobs.blobs.get(row.outputKey!)).toBeNull();
    expect((await gw.services.db.prisma.job.findUniqueOrThrow({ where: { id: job.id } })).status).toBe('expired');
    expect((await get(key, `/test/jobs/${job.id}/download`)).status).toBe(404);
  });
});

describe('hosted copies', () => {
  it('a signed link serves a stored output without credentials; altered, expired or malformed links are 404', async () => {
    const key = await gw.newKey();
    const job: any = await (await submit(key, { text: 'PNG bytes stand-in' })).json();
    await finished(key, job.id);
    const { outputKey } = await gw.services.db.prisma.job.findUniqueOrThrow({ where: { id: job.id } });
    const expiresAt = Date.now() + 120_000;
    const token = gw.services.urls.sign(outputKey!, expiresAt);
    const res = await fetch(`${gw.url}/v1/files/${token}`);
    const answeredAt = Date.now();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.headers.get('content-length')).toBe('18');
    // max-age is what is left of the link's life when it is served: between what was
    // left after the answer arrived and the whole 120 s (a loaded CI machine may take a second).
    const cache = /^private, max-age=(\d+), immutable$/.exec(res.headers.get('cache-control') ?? '');
    expect(cache).not.toBeNull();
    expect(Number(cache![1])).toBeGreaterThanOrEqual(Math.floor((expiresAt - answeredAt) / 1000));
    expect(Number(cache![1])).toBeLessThanOrEqual(120);
    expect(await res.text()).toBe('PNG bytes stand-in');
    const expired = gw.services.urls.sign(outputKey!, Date.now() - 1000);
    const bad = [token.slice(0, -2) + (token.endsWith('AA') ? 'BB' : 'AA'), expired, 'not-a-link', `${token}x.1`];
    for (const t of bad) {
      const r = await fetch(`${gw.url}/v1/files/${t}`);
      expect(r.status).toBe(404);
      expect(((await r.json()) as any).error).toMatchObject({ type: 'invalid_request_error', code: 'file_not_found' });
    }
  });

  it('signed links name their blob until they expire; a changed byte or another secret is refused', () => {
    const signer = new UrlSigner('secret-a');
    const now = Date.now();
    const token = signer.sign('jobs/job_x/output', now + 60_000);
    expect(signer.verify(token, now)).toBe('jobs/job_x/output');
    expect(signer.verify(token, now + 61_000)).toBeNull();
    expect(new UrlSigner('secret-b').verify(token, now)).toBeNull();
    const [k, exp, mac] = token.split('.');
    expect(signer.verify(`${k}.${Number(exp) + 3600}.${mac}`, now)).toBeNull();
    expect(signer.verify(`${Buffer.from('jobs/job_y/output').toString('base64url')}.${exp}.${mac}`, now)).toBeNull();
    expect(signer.verify('garbage', now)).toBeNull();
    expect(() => signer.sign('../etc/passwd', now)).toThrow(/invalid blob key/);
  });
});
