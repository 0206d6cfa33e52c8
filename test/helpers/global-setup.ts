// Builds one migrated embedded database; each test gateway starts from a copy of it, which takes
// milliseconds instead of the ~5 s a fresh PGlite directory needs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../server/db/client.ts';
// @ts-expect-error: a plain ES module without types
import { ensureWebBuild } from '../../scripts/build-web.mjs';

let dir: string;

export async function setup(project: TestProject) {
  // The dashboard's pages are served from its build.
  await ensureWebBuild();
  dir = mkdtempSync(path.join(tmpdir(), 'mg-template-'));
  const db = await openDatabase({ dataDir: dir });
  await db.close();
  project.provide('templateDataDir', dir);
}

export async function teardown() {
  rmSync(dir, { recursive: true, force: true });
}

declare module 'vitest' {
  export interface ProvidedContext {
    templateDataDir: string;
  }
}
