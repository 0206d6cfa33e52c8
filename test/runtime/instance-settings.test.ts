// What instances of one PostgreSQL deployment share without being told (decision 0020): the
// secret and the admin token live in the database, a deployment that had its own in a DATA_DIR
// keeps them, and what still differs per instance is said at start-up and by `config check`.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomToken } from '../../server/runtime/secrets.ts';
import { TEST_REDIS_URL, freshPostgres, minimalConfig, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

type Line = { level: number; msg: string };
/** A logger keeping what the gateway says at start-up. */
function recorder() {
  const lines: Line[] = [];
  const logger = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s) as Line) });
  return { logger, said: () => lines.map((l) => l.msg), warned: () => lines.filter((l) => l.level === 40).map((l) => l.msg) };
}

let work: string;
const gateways: TestGateway[] = [];
const dbs: Awaited<ReturnType<typeof freshPostgres>>[] = [];
beforeAll(() => {
  work = mkdtempSync(path.join(tmpdir(), 'mg-settings-'));
});
afterAll(async () => {
  for (const g of gateways) await g.close();
  for (const d of dbs) await d.drop();
  rmSync(work, { recursive: true, force: true });
});

/** A DATA_DIR holding the secret and admin token a gateway of an earlier version would have made. */
function dataDir(name: string, files: { secret?: string; token?: string } = {}): string {
  const dir = path.join(work, name);
  mkdirSync(dir, { recursive: true });
  if (files.secret) writeFileSync(path.join(dir, 'secret'), files.secret + '\n', { mode: 0o600 });
  if (files.token) writeFileSync(path.join(dir, 'admin-token'), files.token + '\n', { mode: 0o600 });
  return dir;
}

async function start(env: NodeJS.ProcessEnv) {
  const log = recorder();
  const gw = await startTestGateway({ env: { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: `mgtest:${randomToken(6)}:`, ...env }, logger: log.logger });
  gateways.push(gw);
  return { gw, ...log };
}

const admin = async (gw: TestGateway, token: string) => (await gw.fetch('/admin/v1/users', { key: token })).status;

describe('a deployment whose instances each had their own secret and admin token (before decision 0020)', () => {
  it("the first instance to start keeps its own as the deployment's; the others use them, and are told what in their DATA_DIR no longer counts", async () => {
    const db = await freshPostgres();
    dbs.push(db);
    const [secretA, secretB] = [randomToken(64), randomToken(64)];
    const [tokenA, tokenB] = [`mga-${randomToken(43)}`, `mga-${randomToken(43)}`];
    const dirA = dataDir('upgrade-a', { secret: secretA, token: tokenA });
    const dirB = dataDir('upgrade-b', { secret: secretB, token: tokenB });
    const a = await start({ DATABASE_URL: db.url, DATA_DIR: dirA });
    const b = await start({ DATABASE_URL: db.url, DATA_DIR: dirB });
    // A's secret signs for both: its users' stable keys and links stay what they were.
    expect([a.gw.services.cookieSecret, b.gw.services.cookieSecret]).toEqual([secretA, secretA]);
    expect(a.said()).toContain(`secret: from the database (created by this instance from ${path.join(dirA, 'secret')}; shared by every instance)`);
    expect(a.warned()).toEqual([]);
    expect(b.said()).toContain('secret: from the database (shared by every instance)');
    expect(b.warned()).toEqual([
      `${path.join(dirB, 'secret')} is not used: this deployment's secret is kept in the database, shared by every instance. Remove the file to silence this.`,
      `${path.join(dirB, 'admin-token')} holds a token only this instance accepts; the deployment's token, accepted by every instance, is in the DATA_DIR/admin-token of the instance that created it. ` +
        'Use that one (copy it over this file), or set the same GATEWAY_ADMIN_TOKEN on every instance.',
    ]);
    // A's token opens both; B's old one still opens B (scripts using it keep working), not A.
    expect([await admin(a.gw, tokenA), await admin(b.gw, tokenA), await admin(b.gw, tokenB), await admin(a.gw, tokenB)]).toEqual([200, 200, 200, 401]);
  });
});

describe('settings set on one instance only', () => {
  it('GATEWAY_SECRET or GATEWAY_ADMIN_TOKEN that differs from what the other instances share: start-up says so and what to do', async () => {
    const db = await freshPostgres();
    dbs.push(db);
    const first = await start({ DATABASE_URL: db.url, DATA_DIR: dataDir('first') });
    const other = await start({ DATABASE_URL: db.url, DATA_DIR: dataDir('other'), GATEWAY_SECRET: randomToken(40), GATEWAY_ADMIN_TOKEN: `mga-${randomToken(43)}` });
    expect(first.warned()).toEqual([]);
    expect(other.said()).toContain('secret: from GATEWAY_SECRET');
    expect(other.said()).toContain('admin API: token from GATEWAY_ADMIN_TOKEN');
    expect(other.warned()).toEqual([
      "GATEWAY_SECRET is set: every instance needs this same value (hosted-file links, OAuth grants' keys and sign-in state made by one are checked by the others). " +
        'Unset it on every instance to share the secret kept in the database instead.',
      'GATEWAY_ADMIN_TOKEN is set: only the instances with this same value accept it. Unset it on every instance to share the token the first instance created (its hash is kept in the database).',
      "GATEWAY_SECRET differs from the secret kept in the database, which instances without GATEWAY_SECRET use: hosted-file links, OAuth grants' keys and sign-in state made by one of them fail on this one. " +
        'Set the same GATEWAY_SECRET on every instance, or unset it on every instance.',
      "GATEWAY_ADMIN_TOKEN differs from the deployment's admin token (created by an instance without GATEWAY_ADMIN_TOKEN, its hash kept in the database): each is refused by the other instances. " +
        'Set the same GATEWAY_ADMIN_TOKEN on every instance, or unset it on every instance.',
    ]);
  });

  it('DATABASE_URL without REDIS_URL, and a BLOB_DIR: per-instance counters and a directory that must be shared are named at start-up', async () => {
    const db = await freshPostgres();
    dbs.push(db);
    const blobDir = path.join(work, 'shared-blobs');
    const { said, warned } = await start({ DATABASE_URL: db.url, DATA_DIR: dataDir('no-redis'), REDIS_URL: undefined, BLOB_DIR: blobDir });
    expect(said()).toContain(`blob store (uploads, job outputs, hosted files): BLOB_DIR ${blobDir} (every instance must have this same directory)`);
    expect(warned()).toEqual([
      'DATABASE_URL is set but REDIS_URL is not: rate limits, daily quotas and job slots are counted in this process only, so with several instances each enforces them on its own ' +
        '(N instances allow N times a plan). Set the same REDIS_URL on every instance.',
      `BLOB_DIR (${blobDir}) keeps uploads and job outputs: every instance must have this same directory mounted (a shared file system), or jobs submitted on one instance fail on another. ` +
        'Unset BLOB_DIR to keep them in PostgreSQL, or set S3_BUCKET.',
    ]);
  });

  it('the embedded database keeps its secret, token and blobs in DATA_DIR, and says they are this instance\'s', async () => {
    const { gw, said, warned } = await start({ REDIS_URL: undefined });
    expect(said()).toContain(`secret: from ${path.join(gw.dataDir, 'secret')} (this instance only)`);
    expect(said()).toContain(`blob store (uploads, job outputs, hosted files): ${path.join(gw.dataDir, 'blobs')} (this instance only)`);
    expect(said()).toContain(`admin API: token in ${path.join(gw.dataDir, 'admin-token')} (the CLI reads it)`);
    expect(warned()).toEqual([]);
  });
});

describe('config check', () => {
  const bin = new URL('../../bin/model-gateway.mjs', import.meta.url).pathname;
  it('reports the per-instance settings of a deployment as warnings (exit code 0), as serve logs them', async () => {
    const config = path.join(work, 'check.yaml');
    writeFileSync(config, minimalConfig);
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, GATEWAY_CONFIG: config, DATABASE_URL: 'postgres://gateway@db-host:5432/gateway', BLOB_DIR: '/srv/blobs', S3_BUCKET: 'outputs' };
    const { stdout } = await promisify(execFile)(process.execPath, [bin, 'config', 'check', '--json'], { env });
    expect(JSON.parse(stdout).warnings).toEqual([
      'DATABASE_URL is set but REDIS_URL is not: rate limits, daily quotas and job slots are counted in this process only, so with several instances each enforces them on its own ' +
        '(N instances allow N times a plan). Set the same REDIS_URL on every instance.',
      'BLOB_DIR (/srv/blobs) is not used: S3_BUCKET is set, and uploads and job outputs go to the bucket.',
    ]);
  });

  it('--help names the settings of several instances', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [bin, '--help'], { env: { PATH: process.env.PATH, HOME: process.env.HOME } });
    for (const name of ['DATA_DIR', 'GATEWAY_SECRET', 'BLOB_DIR', 'S3_BUCKET', 'S3_ENDPOINT', 'S3_REGION', 'S3_PREFIX', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'S3_FORCE_PATH_STYLE']) {
      expect(stdout).toContain(name);
    }
    expect(stdout).toContain('Several instances: the same DATABASE_URL and REDIS_URL on each, and a DATA_DIR each');
  });
});
