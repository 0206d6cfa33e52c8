import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
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

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}

/** Opens PostgreSQL when `databaseUrl` is set, else the embedded PGlite database under `dataDir`. */
export async function openDatabase(opts: { databaseUrl?: string; dataDir: string; migrate?: boolean }): Promise<Database> {
  let db: Database;
  if (opts.databaseUrl) {
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: Number(process.env.DATABASE_POOL_SIZE ?? 10) });
    // An idle connection dropped by the server (restart, failover) must not crash the process:
    // the pool replaces it and the next query reports any lasting failure.
    pool.on('error', () => {});
    const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
    db = {
      prisma,
      kind: 'postgresql',
      location: redactUrl(opts.databaseUrl),
      sql: {
        exec: async (text) => void (await pool.query(text)),
        query: async (text, params = []) => (await pool.query(text, params)).rows,
        withLock: async (fn) => {
          // Several instances may start at once: one applies the migrations, the others wait.
          const client = await pool.connect();
          try {
            await client.query('SELECT pg_advisory_lock(727073)');
            return await fn({
              exec: async (text) => void (await client.query(text)),
              query: async (text, params = []) => (await client.query(text, params)).rows,
            });
          } finally {
            await client.query('SELECT pg_advisory_unlock(727073)').catch(() => {});
            client.release();
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
    const lite = await PGlite.create(dir);
    const prisma = new PrismaClient({ adapter: new PrismaPGlite(lite) });
    const runner = {
      exec: async (text: string) => void (await lite.exec(text)),
      query: async (text: string, params: unknown[] = []) => (await lite.query(text, params)).rows as Record<string, unknown>[],
    };
    db = {
      prisma,
      kind: 'embedded',
      location: dir,
      sql: { ...runner, withLock: (fn) => fn(runner) },
      ping: async () => void (await lite.query('SELECT 1')),
      close: async () => {
        await prisma.$disconnect();
        await lite.close();
      },
    };
  }
  if (opts.migrate !== false) {
    try {
      await applyMigrations(db.sql);
    } catch (err) {
      await db.close().catch(() => {});
      throw err;
    }
  }
  return db;
}
