import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino, { type Logger } from 'pino';
import { inject } from 'vitest';
import { startGateway, type GatewayExtras, type RunningGateway } from '../../server/main.ts';
import { randomToken } from '../../server/runtime/secrets.ts';
import { jobsKey, quotaKey, type CounterOwner } from '../../server/billing/plans.ts';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A fresh DATA_DIR holding a copy of the migrated template database. */
export function freshDataDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'mg-test-'));
  cpSync(inject('templateDataDir'), dir, { recursive: true });
  return dir;
}

/** A throw-away PostgreSQL database; drop() removes it. */
export async function freshPostgres(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `mg_test_${randomToken(10).toLowerCase()}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export const minimalConfig = `
providers:
  - { id: openai, type: openai, base_url: "http://127.0.0.1:9/v1", api_key: test-key }
models:
  - id: gpt-4o-mini
    endpoint: chat
    upstreams: [{ provider: openai, model: gpt-4o-mini }]
plans:
  - { id: free, rank: 0, daily_tokens: 1000, requests_per_minute: 10, max_concurrent_jobs: 1 }
  - { id: pro, rank: 1, daily_tokens: 100000, requests_per_minute: 100, max_concurrent_jobs: 5 }
key_cache_ttl_ms: 500
`;

export type TestGateway = RunningGateway & {
  dataDir: string;
  env: NodeJS.ProcessEnv;
  /** Creates a user and an API key directly through the service layer. */
  newKey(plan?: string): Promise<string>;
  fetch(pathname: string, init?: RequestInit & { json?: unknown; key?: string }): Promise<Response>;
};

export async function startTestGateway(opts: { config?: string; env?: NodeJS.ProcessEnv; logger?: Logger } & GatewayExtras = {}): Promise<TestGateway> {
  const dataDir = opts.env?.DATABASE_URL ? mkdtempSync(path.join(tmpdir(), 'mg-test-')) : freshDataDir();
  const configPath = path.join(dataDir, 'gateway.config.yaml');
  writeFileSync(configPath, opts.config ?? minimalConfig);
  // Tests never reach OpenRouter or Poe: metadata comes from snapshots and fakes.
  const env: NodeJS.ProcessEnv = { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', GATEWAY_CONFIG: configPath, GATEWAY_METADATA_FETCH: 'off', ...opts.env };
  const gw = await startGateway(env, opts.logger ?? pino({ level: 'silent' }), { jobKinds: opts.jobKinds, concerns: opts.concerns });
  let n = 0;
  return {
    ...gw,
    dataDir,
    env,
    async newKey(plan?: string) {
      const user = await gw.services.accounts.createUser({ email: `user${++n}-${randomToken(6)}@example.com`, plan });
      return (await gw.services.accounts.createKey({ user: user.id })).key;
    },
    fetch(pathname, init = {}) {
      const headers = new Headers(init.headers);
      if (init.key) headers.set('authorization', `Bearer ${init.key}`);
      let body = init.body;
      if (init.json !== undefined) {
        headers.set('content-type', 'application/json');
        body = JSON.stringify(init.json);
      }
      return fetch(gw.url + pathname, { ...init, headers, body });
    },
    async close() {
      await gw.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Asserts the part-7 error body and returns it. */
export async function errorBody(res: Response) {
  const body = (await res.json()) as { error: { message: string; type: string; code: string; param?: string | null } };
  return body.error;
}

/** Whose counters a key's are: its user's hash tag, the key's id (server/billing/plans.ts). */
async function ownerOf(services: RunningGateway['services'], keyId: string): Promise<CounterOwner> {
  const row = await services.db.prisma.apiKey.findUniqueOrThrow({ where: { id: keyId } });
  return { userId: row.userId, keyId };
}

/** Today's quota counter of the key with this id (settled and still reserved tokens), and its job slots. */
export async function keyCounters(services: RunningGateway['services'], keyId: string, now = Date.now()): Promise<{ settled: number; reserved: number; activeJobs: number }> {
  const owner = await ownerOf(services, keyId);
  const q = await services.counters.reserved(quotaKey(owner, now), now);
  const jobs = await services.counters.reserved(jobsKey(owner), now);
  return { settled: q.settled, reserved: q.reserved, activeJobs: jobs.holders };
}

/** Today's quota counter of a key: settled and still reserved tokens. */
export async function quotaOf(gw: TestGateway, key: string): Promise<{ settled: number; reserved: number }> {
  const { settled, reserved } = await keyCounters(gw.services, (await gw.services.keys.authenticate(key))!.keyId);
  return { settled, reserved };
}

/** Polls a job at `path` until it is done or failed (or `ms` pass), and returns its object. */
export async function pollJob(gw: TestGateway, path: string, key: string, ms = 10_000): Promise<any> {
  const end = Date.now() + ms;
  for (;;) {
    const job: any = await (await gw.fetch(path, { key })).json();
    if (job.status === 'done' || job.status === 'failed' || Date.now() > end) return job;
    await new Promise((r) => setTimeout(r, 25));
  }
}
