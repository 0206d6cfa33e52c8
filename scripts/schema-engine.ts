// Drives Prisma's schema engine (WebAssembly build) offline: the native migration CLI needs a binary
// this network cannot download. Node 20 cannot import a .wasm as a module, so it is instantiated by hand.
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';

const require = createRequire(import.meta.url);
export const projectRoot = fileURLToPath(new URL('..', import.meta.url));
export const schemaPath = path.join(projectRoot, 'prisma', 'schema.prisma');
export const migrationsDir = path.join(projectRoot, 'prisma', 'migrations');

type Engine = {
  diff(params: unknown): Promise<{ exitCode: number; stdout: string | null }>;
  free(): void;
};

async function loadEngineModule() {
  const bg: any = await import('@prisma/schema-engine-wasm/schema_engine_bg');
  const wasmPath = path.join(path.dirname(require.resolve('@prisma/schema-engine-wasm')), 'schema_engine_bg.wasm');
  const { instance } = await (globalThis as any).WebAssembly.instantiate(readFileSync(wasmPath), { './schema_engine_bg.js': bg });
  bg.__wbg_set_wasm(instance.exports);
  (instance.exports as any).__wbindgen_start();
  return bg;
}

/** The migrations directory in the shape the engine's `migrations` diff target takes. */
export function migrationList() {
  const dirs = existsSync(migrationsDir)
    ? readdirSync(migrationsDir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort()
    : [];
  const lockPath = path.join(migrationsDir, 'migration_lock.toml');
  return {
    baseDir: migrationsDir,
    lockfile: { path: 'migration_lock.toml', content: existsSync(lockPath) ? readFileSync(lockPath, 'utf8') : null },
    shadowDbInitScript: '',
    migrationDirectories: dirs.map((name) => ({
      path: name,
      migrationFile: {
        path: 'migration.sql',
        content: { tag: 'ok', value: readFileSync(path.join(migrationsDir, name, 'migration.sql'), 'utf8') },
      },
    })),
  };
}

/**
 * SQL that takes a database built by the committed migrations to what schema.prisma describes.
 * Empty when they agree. The engine replays the migrations on an in-memory PGlite shadow database.
 */
export async function diffMigrationsToSchema(): Promise<string> {
  const bg = await loadEngineModule();
  const pglite = new PGlite();
  const logs: string[] = [];
  const engine: Engine = await bg.SchemaEngine.new(
    { datamodels: [[schemaPath, readFileSync(schemaPath, 'utf8')]] },
    (line: string) => logs.push(line),
    // The engine expects the error-capturing wrapper Prisma's CLI puts around an adapter factory.
    bindMigrationAwareSqlAdapterFactory(new PrismaPGlite(pglite)),
  );
  try {
    const result = await engine.diff({
      from: { tag: 'migrations', ...migrationList() },
      to: { tag: 'schemaDatamodel', files: [{ path: schemaPath, content: readFileSync(schemaPath, 'utf8') }] },
      script: true,
      exitCode: null,
      filters: { externalTables: [], externalEnums: [] },
    });
    const sql = (result.stdout ?? '').trim();
    return sql === '-- This is an empty migration.' ? '' : sql;
  } finally {
    engine.free();
    await pglite.close();
  }
}
