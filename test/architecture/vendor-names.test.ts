// The vendor-name check of `npm run check` (scripts/check-vendor-names.ts), run on small trees:
// what it finds, what it lets through, and that the repository passes it.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const script = new URL('../../scripts/check-vendor-names.ts', import.meta.url).pathname;

async function check(files: Record<string, string>): Promise<{ code: number; stderr: string }> {
  const root = mkdtempSync(path.join(tmpdir(), 'vendor-names-'));
  for (const [rel, text] of Object.entries({ 'server/providers/acme/index.ts': 'export const acme = 1;\n', ...files })) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text);
  }
  try {
    await promisify(execFile)(process.execPath, ['--import', 'tsx', script, '--root', root]);
    return { code: 0, stderr: '' };
  } catch (err) {
    const e = err as { code: number; stderr: string };
    return { code: e.code, stderr: e.stderr };
  }
}

describe('vendor names outside their folders', () => {
  it('finds a vendor named in an identifier, a string or a regular expression, by line', async () => {
    const r = await check({
      'server/catalog/x.ts': ["// Acme's list is read here: comments may say so.", 'export const acmeModels = 1;', "export const url = 'https://api.acme.example';", 'export const re = /^acme-/;', ''].join('\n'),
    });
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n').filter((l) => l.startsWith('server/'))).toEqual([
      `server/catalog/x.ts:2: names the vendor 'acme' ("acmeModels"): move this to server/providers/acme/`,
      `server/catalog/x.ts:3: names the vendor 'acme' ("https://api.acme.example"): move this to server/providers/acme/`,
      `server/catalog/x.ts:4: names the vendor 'acme' ("/^acme-/"): move this to server/providers/acme/`,
    ]);
  });

  it('lets through the vendors\' own folders, comments, and words that only contain a name', async () => {
    const r = await check({
      'server/providers/acme/client.ts': "export const acmeClient = 'acme';\n",
      'server/providers/other/index.ts': "import { acme } from '../acme/index.ts';\nexport const other = acme;\n",
      'server/http/y.ts': '/** Acme, acme-like and ACME. */\nexport const acmeish = 1;\nexport const placement = 2;\n',
    });
    // `acmeish` is one word; `placement` holds "acme" only inside a word.
    expect(r).toEqual({ code: 0, stderr: '' });
  });

  it('passes on this repository, every allowance of its list still needed', async () => {
    const { stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script]);
    expect(stderr).toBe('');
  });
});
