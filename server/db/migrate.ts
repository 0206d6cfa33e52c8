// Applies prisma/migrations in Prisma's layout and bookkeeping (`_prisma_migrations`), so the
// Prisma CLI sees the same history should an operator use it elsewhere.
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { projectPath } from '../runtime/paths.ts';

export type SqlQueryable = {
  exec(text: string): Promise<void>;
  query(text: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  /**
   * Bulk load of CSV rows (COPY ... FROM), where the driver offers it; `then`, when given, runs in
   * the same transaction after the rows are in.
   */
  copyCsv?(table: string, columns: string[], csv: string, then?: SqlStatement): Promise<void>;
};
export type SqlStatement = { text: string; params?: unknown[] };
export type SqlRunner = SqlQueryable & {
  withLock<T>(fn: (tx: SqlQueryable) => Promise<T>): Promise<T>;
  /**
   * Runs the statements as one transaction, on a connection of its own without the query time
   * limit (maintenance that may take long: a day's rebuild, a partition's creation); each
   * statement's rows, in order.
   */
  transaction(statements: SqlStatement[]): Promise<Record<string, unknown>[][]>;
};

export const migrationsDir = projectPath('prisma/migrations');

export function listMigrations(dir = migrationsDir): { name: string; sql: string; checksum: string }[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(dir, d.name, 'migration.sql')))
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

export class MigrationError extends Error {}

/** Told of each migration about to be applied: its name, its place and how many are pending. */
export type MigrationProgress = (name: string, n: number, of: number) => void;

/** Applies what is not applied yet, each migration in its own transaction. Returns the names applied. */
export async function applyMigrations(runner: SqlRunner, dir = migrationsDir, onApply?: MigrationProgress): Promise<string[]> {
  const migrations = listMigrations(dir);
  return runner.withLock(async (sql) => {
    await sql.exec(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
      "id" VARCHAR(36) PRIMARY KEY NOT NULL,
      "checksum" VARCHAR(64) NOT NULL,
      "finished_at" TIMESTAMPTZ,
      "migration_name" VARCHAR(255) NOT NULL,
      "logs" TEXT,
      "rolled_back_at" TIMESTAMPTZ,
      "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
      "applied_steps_count" INTEGER NOT NULL DEFAULT 0
    )`);
    const rows = await sql.query(
      `SELECT migration_name, checksum FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    );
    const applied = new Map(rows.map((r) => [String(r.migration_name), String(r.checksum)]));
    const known = new Set(migrations.map((m) => m.name));
    const unknown = [...applied.keys()].filter((n) => !known.has(n));
    if (unknown.length) {
      throw new MigrationError(
        `the database has migrations this version does not know (${unknown.join(', ')}): it was migrated by a newer release`,
      );
    }
    const done: string[] = [];
    const pending = migrations.filter((m) => !applied.has(m.name));
    for (const m of pending) {
      onApply?.(m.name, done.length + 1, pending.length);
      await sql.exec('BEGIN');
      try {
        await sql.exec(m.sql);
        await sql.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count) VALUES ($1, $2, now(), $3, 1)`,
          [randomUUID(), m.checksum, m.name],
        );
        await sql.exec('COMMIT');
      } catch (err) {
        await sql.exec('ROLLBACK').catch(() => {});
        throw new MigrationError(`migration ${m.name} failed: ${(err as Error).message}`);
      }
      done.push(m.name);
    }
    return done;
  });
}
