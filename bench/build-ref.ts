// Another build of the gateway, for comparing builds side by side (`bench -- cpu --against <ref>`):
// the ref checked out in a temporary git worktree, its Prisma client generated, its server bundled
// and its dashboard built, ready to `serve` like this checkout.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

export type Build = { label: string; bin: string; remove(): void };

/** The current checkout (uncommitted changes included). */
export function thisBuild(): Build {
  let label = 'this checkout';
  try {
    label = `this (${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', '--untracked-files=no') ? '+changes' : ''})`;
  } catch {
    // not a git checkout
  }
  return { label, bin: path.join(root, 'bin/model-gateway.mjs'), remove() {} };
}

function run(cwd: string, args: string[], what: string) {
  const r = spawnSync(process.execPath, args, { cwd, encoding: 'utf8', env: { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: '1', CHECKPOINT_DISABLE: '1' } });
  if (r.status !== 0) throw new Error(`${what} failed in ${cwd}: ${(r.stderr || r.stdout).slice(-2000)}`);
}

/**
 * Checks `ref` out in a temporary worktree and builds it. Its dependencies are this checkout's
 * `node_modules` when both lockfiles are the same, else installed from its own lockfile (`npm ci`).
 */
export function buildRef(ref: string): Build {
  const sha = git('rev-parse', '--verify', `${ref}^{commit}`);
  const dir = mkdtempSync(path.join(tmpdir(), `mg-bench-${sha.slice(0, 7)}-`));
  git('worktree', 'add', '--detach', '--force', dir, sha);
  const remove = () => {
    try {
      git('worktree', 'remove', '--force', dir);
    } catch {
      rmSync(dir, { recursive: true, force: true });
      git('worktree', 'prune');
    }
  };
  try {
    const sameLock = readFileSync(path.join(root, 'package-lock.json'), 'utf8') === readFileSync(path.join(dir, 'package-lock.json'), 'utf8');
    if (sameLock) symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    else {
      const r = spawnSync('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir, encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`npm ci failed for ${ref}: ${r.stderr.slice(-2000)}`);
    }
    run(dir, ['scripts/prisma-generate.mjs'], 'prisma generate');
    run(dir, ['scripts/bundle.mjs'], 'bundling the server');
    if (existsSync(path.join(dir, 'scripts/build-web.mjs'))) run(dir, ['scripts/build-web.mjs'], 'building the dashboard');
  } catch (err) {
    remove();
    throw err;
  }
  return { label: sha.startsWith(ref) ? sha.slice(0, 7) : `${ref} (${sha.slice(0, 7)})`, bin: path.join(dir, 'bin/model-gateway.mjs'), remove };
}
