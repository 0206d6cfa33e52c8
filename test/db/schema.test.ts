// The committed migrations build exactly what schema.prisma describes, and every model
// round-trips on both the embedded database and PostgreSQL.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diffMigrationsToSchema } from '../../scripts/schema-engine.ts';
import { openDatabase, type Database } from '../../server/db/client.ts';
import { applyMigrations, listMigrations, migrationsDir } from '../../server/db/migrate.ts';
import { freshDataDir, freshPostgres } from '../helpers/gateway.ts';

it('migrations and schema.prisma agree', async () => {
  expect(await diffMigrationsToSchema()).toBe('');
}, 60_000);

async function roundTrip(db: Database) {
  const p = db.prisma;
  const now = new Date('2026-01-02T03:04:05.678Z');
  const user = await p.user.create({ data: { id: 'usr_1', email: 'a@example.com', name: 'A', planId: 'free', avatarUrl: 'https://x/a.png' } });
  expect(user.createdAt).toBeInstanceOf(Date);
  await p.identity.create({ data: { id: 'idn_1', userId: user.id, provider: 'discord', subject: '123', email: 'a@example.com' } });
  await p.webSession.create({ data: { id: 'ses_1', tokenHash: 'h1', userId: user.id, csrfHash: 'c1', expiresAt: now } });
  await p.apiKey.create({ data: { id: 'key_1', userId: user.id, prefix: 'mg-abcdef', hash: 'hash-1', kind: 'stable' } });
  await p.usageRecord.create({
    data: {
      requestId: 'req_1', apiKeyId: 'key_1', userId: user.id, model: 'm', provider: 'openai', upstreamModel: 'gpt', endpoint: 'chat',
      promptTokens: 10, completionTokens: 5, cachedTokens: 2, reasoningTokens: 1, surchargeTokens: 0, multiplier: 1.5,
      billedTokens: 9_000_000_000n, usageSource: 'reported', status: 200, latencyMs: 42, createdAt: now,
    },
  });
  await p.job.create({
    data: { id: 'job_1', kind: 'speech', apiKeyId: 'key_1', userId: user.id, model: 'tts-1', status: 'queued', request: { input: 'hi', nested: [1, { a: null }] }, warnings: ['w1', 'w2'], expiresAt: now },
  });
  const app = await p.oAuthApp.create({
    data: { id: 'app_1', clientId: 'cid', ownerId: user.id, name: 'App', redirectUris: ['https://a.example/cb', 'http://localhost:3000/cb'], secretHash: 's' },
  });
  await p.oAuthCode.create({
    data: { id: 'cod_1', codeHash: 'ch', appId: app.id, userId: user.id, redirectUri: 'https://a.example/cb', scopes: ['identity', 'inference'], codeChallenge: 'x'.repeat(43), codeChallengeMethod: 'S256', expiresAt: now },
  });
  const grant = await p.oAuthGrant.create({ data: { id: 'grt_1', appId: app.id, userId: user.id, scopes: ['identity'] } });
  await p.oAuthToken.create({ data: { id: 'tok_1', grantId: grant.id, kind: 'access', tokenHash: 'th', expiresAt: now } });
  await p.modelHealthSample.create({ data: { model: 'm', provider: 'openai', bucketStart: now, requests: 3, errors: 1, latencyMsSum: 1234n, latencyMsMax: 900, lastErrorCode: 'upstream_error' } });
  await p.catalogMetadata.create({ data: { source: 'openrouter', externalId: 'openai/gpt-4o', data: { context_length: 128000 }, fetchedAt: now } });

  const read = await p.user.findUniqueOrThrow({
    where: { id: 'usr_1' },
    include: { identities: true, sessions: true, apiKeys: true, jobs: true, oauthApps: { include: { codes: true, grants: { include: { tokens: true } } } } },
  });
  expect(read.identities[0]).toMatchObject({ provider: 'discord', subject: '123' });
  expect(read.sessions[0]!.expiresAt.toISOString()).toBe(now.toISOString());
  expect(read.apiKeys[0]).toMatchObject({ hash: 'hash-1', kind: 'stable', revokedAt: null });
  expect(read.jobs[0]).toMatchObject({ request: { input: 'hi', nested: [1, { a: null }] }, warnings: ['w1', 'w2'], attempts: 0 });
  expect(read.oauthApps[0]!.redirectUris).toEqual(['https://a.example/cb', 'http://localhost:3000/cb']);
  expect(read.oauthApps[0]!.codes[0]!.scopes).toEqual(['identity', 'inference']);
  expect(read.oauthApps[0]!.grants[0]!.tokens[0]).toMatchObject({ kind: 'access', tokenHash: 'th' });
  expect(await p.usageRecord.findFirstOrThrow({ where: { requestId: 'req_1' } })).toMatchObject({ billedTokens: 9_000_000_000n, multiplier: 1.5, createdAt: now });
  expect(await p.modelHealthSample.findFirstOrThrow()).toMatchObject({ latencyMsSum: 1234n, errors: 1 });
  expect((await p.catalogMetadata.findFirstOrThrow()).data).toEqual({ context_length: 128000 });

  await expect(p.apiKey.create({ data: { id: 'key_2', userId: user.id, prefix: 'x', hash: 'hash-1' } })).rejects.toThrow();
  // Deleting a user removes what hangs off it.
  await p.user.delete({ where: { id: 'usr_1' } });
  expect(await p.apiKey.count()).toBe(0);
  expect(await p.oAuthToken.count()).toBe(0);
  expect(await applyMigrations(db.sql)).toEqual([]);
}

describe('embedded (PGlite)', () => {
  let db: Database;
  let dir: string;
  beforeAll(async () => {
    dir = freshDataDir();
    db = await openDatabase({ dataDir: dir });
  });
  afterAll(async () => {
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  it('round-trips every model', () => roundTrip(db));

  // The database runs on its own thread: transactions, errors and shutdown cross that boundary.
  it('interactive transactions commit or roll back as a whole on the database thread', async () => {
    const p = db.prisma;
    await expect(
      p.$transaction(async (tx) => {
        await tx.user.create({ data: { id: 'usr_tx1', email: 'tx1@example.com', planId: 'free' } });
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await p.user.count({ where: { id: 'usr_tx1' } })).toBe(0);
    await p.$transaction(async (tx) => {
      await tx.user.create({ data: { id: 'usr_tx2', email: 'tx2@example.com', planId: 'free' } });
      await tx.user.update({ where: { id: 'usr_tx2' }, data: { name: 'Two' } });
    });
    expect((await p.user.findUniqueOrThrow({ where: { id: 'usr_tx2' } })).name).toBe('Two');
  });

  it('database errors keep their Prisma codes across the thread', async () => {
    await db.prisma.user.create({ data: { id: 'usr_dup', email: 'dup@example.com', planId: 'free' } });
    await expect(db.prisma.user.create({ data: { id: 'usr_dup2', email: 'dup@example.com', planId: 'free' } })).rejects.toMatchObject({ code: 'P2002' });
    await expect(db.sql.query('SELECT * FROM no_such_table')).rejects.toMatchObject({ code: '42P01' });
  });

  it('calls after close fail at once instead of waiting', async () => {
    await db.close();
    await expect(db.sql.query('SELECT 1')).rejects.toThrow(/exited/);
    db = await openDatabase({ dataDir: dir });
    expect(await db.sql.query('SELECT count(*)::int AS n FROM users WHERE id = $1', ['usr_tx2'])).toEqual([{ n: 1 }]);
  });
});

describe('PostgreSQL', () => {
  let db: Database;
  let pg: Awaited<ReturnType<typeof freshPostgres>>;
  beforeAll(async () => {
    pg = await freshPostgres();
    db = await openDatabase({ databaseUrl: pg.url, dataDir: '/nonexistent' });
  });
  afterAll(async () => {
    await db?.close();
    await pg?.drop();
  });
  it('round-trips every model', () => roundTrip(db));
  it('records migrations in Prisma’s table', async () => {
    const rows = await db.sql.query('SELECT migration_name, finished_at FROM "_prisma_migrations"');
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.finished_at !== null)).toBe(true);
  });
  it('the grant-key migration retires the per-user stable keys and gives older tokens their grant’s scopes', async () => {
    const other = await freshPostgres();
    const before = mkdtempSync(path.join(tmpdir(), 'mg-migrations-'));
    try {
      const all = listMigrations();
      const target = all.findIndex((m) => m.name.endsWith('_oauth_grant_keys_and_token_scopes'));
      for (const m of all.slice(0, target)) cpSync(path.join(migrationsDir, m.name), path.join(before, m.name), { recursive: true });
      const old = await openDatabase({ databaseUrl: other.url, dataDir: '/nonexistent', migrate: false });
      await applyMigrations(old.sql, before);
      await old.sql.exec(`INSERT INTO users (id, plan_id, updated_at) VALUES ('usr_1', 'free', now());
        INSERT INTO api_keys (id, user_id, prefix, hash, kind) VALUES ('key_s', 'usr_1', 'mg-s', 'hs', 'stable'), ('key_n', 'usr_1', 'mg-n', 'hn', 'standard');
        INSERT INTO oauth_apps (id, client_id, owner_id, name, redirect_uris) VALUES ('app_1', 'cid', 'usr_1', 'A', '{}');
        INSERT INTO oauth_grants (id, app_id, user_id, scopes) VALUES ('grt_1', 'app_1', 'usr_1', '{identity,inference}');
        INSERT INTO oauth_tokens (id, grant_id, kind, token_hash) VALUES ('tok_1', 'grt_1', 'access', 'th');`);
      await applyMigrations(old.sql);
      const keys = await old.prisma.apiKey.findMany({ orderBy: { id: 'asc' } });
      expect(keys.map((k) => [k.id, k.revokedAt !== null])).toEqual([['key_n', false], ['key_s', true]]);
      expect((await old.prisma.oAuthToken.findUniqueOrThrow({ where: { id: 'tok_1' } })).scopes).toEqual(['identity', 'inference']);
      await old.close();
    } finally {
      rmSync(before, { recursive: true, force: true });
      await other.drop();
    }
  });
  it('applies migrations once when several instances start together', async () => {
    const other = await freshPostgres();
    try {
      const dbs = await Promise.all([1, 2, 3].map(() => openDatabase({ databaseUrl: other.url, dataDir: '/nonexistent' })));
      const rows = await dbs[0]!.sql.query('SELECT count(*)::int AS n FROM "_prisma_migrations"');
      expect(rows[0]!.n).toBe(listMigrations().length);
      await Promise.all(dbs.map((d) => d.close()));
    } finally {
      await other.drop();
    }
  });
});
