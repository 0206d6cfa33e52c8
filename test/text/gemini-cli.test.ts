// Gemini CLI itself (@google/gemini-cli, pinned in package.json) pointed at the gateway with
// GOOGLE_GEMINI_BASE_URL and a gateway key as GEMINI_API_KEY, non-interactive (`-p`), its HOME
// isolated and its telemetry off: a two-turn agent run on every upstream type — it reads a file
// with its read_file tool and answers with what the model said — through the Gemini-format routes.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROVIDERS, startTextGateway } from '../helpers/text-gateway.ts';

const require = createRequire(import.meta.url);
const gemini = path.join(path.dirname(require.resolve('@google/gemini-cli/package.json')), 'bundle', 'gemini.js');

let t: Awaited<ReturnType<typeof startTextGateway>>;
let dir: string;
beforeAll(async () => {
  t = await startTextGateway();
  dir = mkdtempSync(path.join(tmpdir(), 'mg-gemini-cli-'));
  mkdirSync(path.join(dir, '.gemini'));
  // With a custom base URL the CLI would pick its "gateway" auth type, which its headless mode
  // refuses: the API-key type is chosen explicitly. Nothing is sent anywhere but the gateway.
  const settings = { security: { auth: { selectedType: 'gemini-api-key' } }, telemetry: { enabled: false }, privacy: { usageStatisticsEnabled: false } };
  writeFileSync(path.join(dir, '.gemini', 'settings.json'), JSON.stringify(settings));
  writeFileSync(path.join(dir, 'README.md'), '# Lighthouse\nA tiny project that keeps the harbour lamp lit.\n');
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

type Result = { response?: string; error?: { message: string }; stats: { tools: { totalCalls: number; totalSuccess: number } } };

/** `gemini -p` with nothing of this machine's own configuration. */
function runGemini(prompt: string, model: string, key = t.key): Promise<Result> {
  const env = { PATH: process.env.PATH, HOME: dir, GEMINI_API_KEY: key, GOOGLE_GEMINI_BASE_URL: t.gw.url, GEMINI_CLI_NO_RELAUNCH: 'true', NO_COLOR: '1' };
  const args = [gemini, '-p', prompt, '-m', model, '--output-format', 'json', '--skip-trust'];
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, args, { cwd: dir, env, timeout: 90_000 }, (err, stdout, stderr) => {
      // The result is the JSON object printed last (after the error's stack trace, on a failure).
      const text = stdout.trim() || stderr.trim();
      const start = text.startsWith('{') ? 0 : text.lastIndexOf('\n{\n');
      try {
        resolve(JSON.parse(text.slice(start)) as Result);
      } catch {
        reject(new Error(`gemini printed no result (${err?.message ?? 'exit 0'}): ${stdout}\n${stderr}`));
      }
    });
    child.stdin?.end();
  });
}

describe.each(PROVIDERS)('Gemini CLI → %s', (p) => {
  it('runs a read_file round trip and answers', async () => {
    const before = t.fake.requests.length;
    const r = await runGemini(`Read ${dir}/README.md and summarise it.`, `${p}-agentic`);
    expect(r.error).toBeUndefined();
    expect(r.response).toMatch(/^The tool said: /);
    expect(r.response).toContain('A tiny project that keeps the harbour lamp lit.');
    expect(r.stats.tools).toMatchObject({ totalCalls: 1, totalSuccess: 1 });
    // Turn one asked for the file, turn two carried its content back as a function response.
    const sent = t.fake.requests.slice(before).filter((q) => !q.path.includes('countTokens'));
    expect(sent).toHaveLength(2);
    expect(JSON.stringify(sent[1]!.body)).toContain('harbour lamp');
  }, 120_000);
});

it('shows the gateway’s error message for an unknown model', async () => {
  const r = await runGemini('Hello', 'no-such-model');
  expect(r.error?.message).toContain("The model 'no-such-model' does not exist or is not served by this gateway");
}, 120_000);
