// The Claude Code CLI itself (the native binary of @anthropic-ai/claude-code, pinned in
// package.json) pointed at the gateway with ANTHROPIC_BASE_URL: a two-turn agent run on every
// upstream type — it reads a file with its Read tool and answers with what the model said.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROVIDERS, startTextGateway } from '../helpers/text-gateway.ts';

const require = createRequire(import.meta.url);
/** The platform's native binary, as the package's own wrapper finds it. */
const claude = path.join(path.dirname(require.resolve(`@anthropic-ai/claude-code-${process.platform}-${process.arch}/package.json`)), 'claude');

let t: Awaited<ReturnType<typeof startTextGateway>>;
let dir: string;
beforeAll(async () => {
  t = await startTextGateway();
  dir = mkdtempSync(path.join(tmpdir(), 'mg-claude-'));
  writeFileSync(path.join(dir, 'README.md'), '# Lighthouse\nA tiny project that keeps the harbour lamp lit.\n');
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

type Result = { is_error: boolean; result: string; num_turns: number; subtype: string };

/** `claude -p` with nothing of this machine's own configuration, and no traffic but to the gateway. */
function runClaude(prompt: string, model: string, key = t.key): Promise<Result> {
  const env = {
    PATH: process.env.PATH,
    HOME: dir,
    ANTHROPIC_BASE_URL: t.gw.url,
    ANTHROPIC_API_KEY: key,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
  };
  const args = ['-p', prompt, '--model', model, '--allowedTools', 'Read', '--output-format', 'json'];
  return new Promise((resolve, reject) => {
    const child = execFile(claude, args, { cwd: dir, env, timeout: 60_000 }, (err, stdout, stderr) => {
      const line = stdout.trim().split('\n').pop() ?? '';
      try {
        resolve(JSON.parse(line) as Result);
      } catch {
        reject(new Error(`claude printed no result (${err?.message ?? 'exit 0'}): ${stdout}\n${stderr}`));
      }
    });
    // A piped stdin is read as more prompt: closed, claude does not wait for it.
    child.stdin?.end();
  });
}

describe.each(PROVIDERS)('Claude Code CLI → %s', (p) => {
  it('runs a tool round trip and answers', async () => {
    const before = t.fake.requests.length;
    const r = await runClaude(`Read ${dir}/README.md and summarise it.`, `${p}-agentic`);
    expect(r).toMatchObject({ is_error: false, subtype: 'success', num_turns: 2 });
    expect(r.result).toMatch(/^The tool said: /);
    expect(r.result).toContain('A tiny project that keeps the harbour lamp lit.');
    // Turn one asked for the file, turn two carried its content back as a tool result.
    const sent = t.fake.requests.slice(before).filter((q) => !q.path.includes('count_tokens'));
    expect(sent).toHaveLength(2);
    expect(JSON.stringify(sent[1]!.body)).toContain('harbour lamp');
  });
});

it('shows the gateway’s error message for an unknown model', async () => {
  const r = await runClaude('Hello', 'no-such-model');
  expect(r.is_error).toBe(true);
  expect(r.result).toContain("The model 'no-such-model' does not exist or is not served by this gateway: GET /v1/models lists the models it serves.");
});
