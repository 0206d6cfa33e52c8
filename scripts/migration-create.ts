// Writes prisma/migrations/<timestamp>_<name>/migration.sql with the SQL that brings the committed
// migrations up to schema.prisma. Usage: npm run migration:create -- <name>
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { diffMigrationsToSchema, migrationsDir } from './schema-engine.ts';

const name = (process.argv[2] ?? '').replace(/[^a-z0-9_]+/gi, '_').toLowerCase();
if (!name) {
  console.error('usage: npm run migration:create -- <name>');
  process.exit(2);
}
const sql = await diffMigrationsToSchema();
if (!sql) {
  console.log('schema.prisma and the migrations agree: nothing to write.');
  process.exit(0);
}
const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
const dir = path.join(migrationsDir, `${stamp}_${name}`);
mkdirSync(dir, { recursive: true });
writeFileSync(path.join(dir, 'migration.sql'), sql + '\n');
console.log(`wrote ${path.relative(process.cwd(), dir)}/migration.sql`);
