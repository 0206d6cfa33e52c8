// Builds the dashboard (web/) with esbuild into dist/web: one hashed script and stylesheet under
// assets/, and index.html naming them. Preact, Chart.js and the generated API client are bundled:
// no CDN, the gateway serves everything. Run by postinstall and `npm run build`; the CLI and the
// tests call ensureWebBuild(), which rebuilds when a source is newer than the build.
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
export const webDir = path.join(root, 'dist', 'web');
const indexPath = path.join(webDir, 'index.html');
// What the bundle is built from: the dashboard, the generated client, the one contract file it
// imports (the dashboard's paths), and this script.
const sources = [
  path.join(root, 'web'),
  path.join(root, 'clients', 'typescript', 'src'),
  path.join(root, 'contract', 'dashboard-pages.ts'),
  path.join(root, 'scripts', 'build-web.mjs'),
];

function newest(p) {
  const s = statSync(p, { throwIfNoEntry: false });
  if (!s) return 0;
  if (!s.isDirectory()) return s.mtimeMs;
  return readdirSync(p).reduce((n, e) => Math.max(n, newest(path.join(p, e))), s.mtimeMs);
}

export function webBuildIsFresh() {
  const built = statSync(indexPath, { throwIfNoEntry: false });
  return !!built && built.mtimeMs >= Math.max(...sources.map(newest));
}

export async function buildWeb() {
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: { app: path.join(root, 'web', 'src', 'main.tsx') },
    outdir: path.join(webDir, 'assets'),
    entryNames: '[name]-[hash]',
    bundle: true,
    write: false,
    metafile: true,
    minify: true,
    sourcemap: 'linked',
    format: 'esm',
    target: ['chrome110', 'firefox115', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    logLevel: 'warning',
    legalComments: 'linked',
  });
  // Several processes may build at once (tests, instances): each writes temporary files and renames
  // them into place, index.html last, so a page never names an asset that is not there yet.
  const tmp = `${webDir}.${process.pid}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(path.join(tmp, 'assets'), { recursive: true });
  const names = {};
  for (const f of result.outputFiles) {
    const rel = path.relative(webDir, f.path);
    writeFileSync(path.join(tmp, rel), f.contents);
    if (/^assets\/app-[^/]+\.(js|css)$/.test(rel)) names[path.extname(rel)] = `/${rel}`;
  }
  const template = readFileSync(path.join(root, 'web', 'index.html'), 'utf8');
  const html = template.replace('%SCRIPT%', names['.js']).replace('%STYLE%', names['.css'] ?? '');
  mkdirSync(path.join(webDir, 'assets'), { recursive: true });
  for (const f of readdirSync(path.join(tmp, 'assets'))) renameSync(path.join(tmp, 'assets', f), path.join(webDir, 'assets', f));
  writeFileSync(path.join(tmp, 'index.html'), html);
  renameSync(path.join(tmp, 'index.html'), indexPath);
  rmSync(tmp, { recursive: true, force: true });
  // Assets of earlier builds go (a page still open on one reloads into the new build).
  const current = new Set(result.outputFiles.map((f) => path.basename(f.path)));
  for (const f of readdirSync(path.join(webDir, 'assets'))) if (!current.has(f)) rmSync(path.join(webDir, 'assets', f), { force: true });
  return indexPath;
}

/** Builds when stale; the path of index.html. */
export async function ensureWebBuild() {
  if (!webBuildIsFresh()) await buildWeb();
  return indexPath;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  await buildWeb();
}
