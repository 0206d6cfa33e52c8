import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { PGliteRemote } from './pglite-remote.ts';
import { projectPath } from '../runtime/paths.ts';
import { PrismaClient } from './generated/client.ts';
import { applyMigrations, type SqlRunner } from './migrate.ts';

export type { PrismaClient } from './generated/client.ts';

export type Database = {
  prisma: PrismaClient;
  kind: 'postgresql' | 'embedded';
  /** Where the data lives, for messages (the URL's password removed). */
  location: string;
  sql: SqlRunner;
  ping(): Promise<void>;
  close(): Promise<void>;
};

/** DATABASE_CONNECT_TIMEOUT_MS (default 2,000) and DATABASE_QUERY_TIMEOUT_MS (default 5,000). */
export function databaseTimeouts(env: NodeJS.ProcessEnv): { connectMs: number; queryMs: number } {
  const ms = (name: string, fallback: number) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive number of milliseconds (got '${raw}')`);
    return n;
  };
  return { connectMs: ms('DATABASE_CONNECT_TIMEOUT_MS', 2_000), queryMs: ms('DATABASE_QUERY_TIMEOUT_MS', 5_000) };
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}

/**
 * Postgres' default 128 MB buffer pool is touched at start-up and stays resident inside
 * PGlite's WebAssembly memory; the embedded database is small and mostly written in batches,
 * so 16 MB (PGLITE_SHARED_BUFFERS to change) keeps the process lean without slowing it.
 */
const pgliteStartParams = () => ['-c', `shared_buffers=${process.env.PGLITE_SHARED_BUFFERS ?? '16MB'}`];

async function initEmbeddedDirectory(dir: string, progress?: (message: string) => void): Promise<void> {
  if (existsSync(path.join(dir, 'PG_VERSION'))) return;
  // The first start spends most of its time here and in the migrations: said, so it does not look hung.
  progress?.(`creating the embedded database in ${dir} (first start only; with its migrations this takes 10–30 s)…`);
  const script = projectPath('server/db/pglite-initdb.mjs');
  await promisify(execFile)(process.execPath, [script, dir], { timeout: 120_000 }).catch((err: Error & { stderr?: string }) => {
    throw new Error(`could not create the embedded database in ${dir}: ${err.stderr?.trim() || err.message}`);
  });
}

/** Opens PostgreSQL when `databaseUrl` is set, else the embedded PGlite database under `dataDir`. */
export async function openDatabase(opts: {
  databaseUrl?: string;
  dataDir: string;
  migrate?: boolean;
  timeouts?: { connectMs: number; queryMs: number };
  /** Told what takes long: creating the embedded database, each migration applied. */
  progress?: (message: string) => void;
}): Promise<Database & { migrationsApplied: string[] }> {
  let db: Database;
  if (opts.databaseUrl) {
    // Loaded only for PostgreSQL: the embedded database does without their ~3 MB of heap.
    const [{ PrismaPg }, { default: pg }] = await Promise.all([import('@prisma/adapter-pg'), import('pg')]);
    const timeouts = opts.timeouts ?? databaseTimeouts(process.env);
    // Outages (docs/decisions/0010-store-outages.md): a connection not made within connectMs and a
    // query not answered within queryMs fail (the request gets 503 database_unavailable) instead
    // of waiting for the database; the server abandons such a statement too (statement_timeout).
    const pool = new pg.Pool({
      connectionString: opts.databaseUrl,
      max: Number(process.env.DATABASE_POOL_SIZE ?? 10),
      connectionTimeoutMillis: timeouts.connectMs,
      query_timeout: timeouts.queryMs,
      statement_timeout: timeouts.queryMs,
      keepAlive: true,
    });
    // An idle connection dropped by the server (restart, failover) must not crash the process:
    // the pool replaces it and the next query reports any lasting failure.
    pool.on('error', () => {});
    const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
    const ownConnection = async () => {
      const client = new pg.Client({ connectionString: opts.databaseUrl, connectionTimeoutMillis: timeouts.connectMs });
      client.on('error', () => {});
      await client.connect();
      return client;
    };
    db = {
      prisma,
      kind: 'postgresql',
      location: redactUrl(opts.databaseUrl),
      sql: {
        exec: async (text) => void (await pool.query(text)),
        query: async (text, params = []) => (await pool.query(text, params)).rows,
        withLock: async (fn) => {
          // Several instances may start at once: one applies the migrations, the others wait, as
          // long as it takes (a connection of its own, without the query timeout).
          const client = await ownConnection();
          try {
            await client.query('SELECT pg_advisory_lock(727073)');
            return await fn({
              exec: async (text) => void (await client.query(text)),
              query: async (text, params = []) => (await client.query(text, params)).rows,
            });
          } finally {
            await client.query('SELECT pg_advisory_unlock(727073)').catch(() => {});
            await client.end().catch(() => {});
          }
        },
        transaction: async (statements) => {
          // A connection of its own: the pool's carry the query time limit, and this work may
          // rightly take longer (a day's rebuild at 50 million rows).
          const client = await ownConnection();
          try {
            await client.query('BEGIN');
            const results: Record<string, unknown>[][] = [];
            for (const s of statements) results.push((await client.query(s.text, s.params ?? [])).rows);
            await client.query('COMMIT');
            return results;
          } catch (err) {
            await client.query('ROLLBACK').catch(() => {});
            throw err;
          } finally {
            await client.end().catch(() => {});
          }
        },
      },
      ping: async () => void (await pool.query('SELECT 1')),
      close: async () => {
        await prisma.$disconnect();
        await pool.end();
      },
    };
  } else {
    const dir = path.resolve(opts.dataDir, 'db');
    mkdirSync(dir, { recursive: true });
    await initEmbeddedDirectory(dir, opts.progress);
    db = await openEmbedded(dir);
  }
  let applied: string[] = [];
  if (opts.migrate !== false) {
    try {
      applied = await applyMigrations(db.sql, undefined, opts.progress && ((name, n, of) => opts.progress!(`applying migration ${n}/${of}: ${name}`)));
      if (applied.length > 0 && db.kind === 'embedded') {
        // Creating a schema leaves PGlite's memory grown for good; a reopened instance starts small.
        await db.close();
        db = await openEmbedded(db.location);
      }
    } catch (err) {
      await db.close().catch(() => {});
      throw err;
    }
  }
  return { ...db, migrationsApplied: applied };
}

async function openEmbedded(dir: string): Promise<Database> {
  const remote = await PGliteRemote.open(dir, pgliteStartParams());
  const prisma = new PrismaClient({ adapter: remote.adapterFactory() });
  const runner = { exec: remote.exec, query: remote.query, copyCsv: remote.copyCsv };
  return {
    prisma,
    kind: 'embedded',
    location: dir,
    sql: { ...runner, withLock: (fn) => fn(runner), transaction: remote.transaction },
    ping: async () => void (await remote.query('SELECT 1')),
    close: async () => {
      await prisma.$disconnect();
      await remote.close();
    },
  };
}
