// Files that ship beside the code (package.json, migrations, helper scripts) are found from the
// project root, so the same lookups work from the TypeScript sources and from the bundle in dist/.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === 'model-gateway') return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find the model-gateway package root');
    dir = parent;
  }
}

export const projectRoot = findRoot();
export const projectPath = (...parts: string[]) => path.join(projectRoot, ...parts);
