// Generates the Prisma client at install time, offline.
// `prisma generate` only needs the schema engine binary to exist on disk (it never runs it for the
// `prisma-client` generator); this network cannot download it, so point it at any existing file.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const prismaBin = `${root}node_modules/prisma/build/index.js`;
if (!existsSync(prismaBin)) {
  // Installed without dev dependencies: the generated client must already be present.
  process.exit(0);
}
const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: '1', CHECKPOINT_DISABLE: '1' };
env.PRISMA_SCHEMA_ENGINE_BINARY ??= process.execPath;
const r = spawnSync(process.execPath, [prismaBin, 'generate'], { cwd: root, env, stdio: 'inherit' });
process.exit(r.status ?? 1);
