// .ci/run runs the whole suite on the machines' Node and, on the newer releases, the files
// test/node-versions.txt lists: a path that no longer names a test file would silently run nothing
// there (vitest runs what the other filters match).
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const read = (file: string) => readFileSync(new URL(file, root), 'utf8');

describe('the test files CI runs on the newer Node releases', () => {
  const files = read('test/node-versions.txt')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));

  it('are test files that exist, each listed once', () => {
    expect(files.length).toBeGreaterThan(10);
    for (const f of files) {
      expect(f, f).toMatch(/^test\/.+\.test\.ts$/);
      expect(existsSync(new URL(f, root)), f).toBe(true);
    }
    expect(new Set(files).size).toBe(files.length);
  });

  it('are what .ci/run runs on Node 22 and 24, before the whole suite on the machines\' Node', () => {
    const ci = read('.ci/run');
    expect(ci).toContain("grep -v '^#' test/node-versions.txt");
    expect(ci).toMatch(/for v in 22 24; do[\s\S]*npx -y -p "node@\$v" -- npx vitest run \$versioned/);
    expect(ci.trimEnd().endsWith('npm test')).toBe(true);
  });
});
