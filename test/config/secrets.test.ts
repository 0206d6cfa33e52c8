// Credentials that are a template's placeholder, and a gateway secret too short to sign with, are
// refused (decision 0033): at start-up before anything is opened, by `config check`, and when a
// config is loaded (providers' keys). The repository's own templates are on the list.
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseConfig } from '../../server/boot/config.ts';
import { credentialProblem, isPlaceholder, secretProblems } from '../../server/config/placeholders.ts';
import { randomToken } from '../../server/runtime/secrets.ts';
import { startGateway } from '../../server/main.ts';
import { minimalConfig } from '../helpers/gateway.ts';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
const problemsOf = (fn: () => unknown): string[] => {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
};

describe('placeholders', () => {
  it("the repository's own templates: deploy/kubernetes/secret.yaml's credentials and the README's …", () => {
    const secret = parse(read('deploy/kubernetes/secret.yaml')) as { stringData: Record<string, string> };
    const credentials = Object.entries(secret.stringData).filter(([k]) => k === 'GATEWAY_SECRET' || k.endsWith('_API_KEY') || k.startsWith('S3_'));
    expect(credentials.length).toBeGreaterThanOrEqual(7);
    for (const [name, value] of credentials) expect(isPlaceholder(value), name).toBe(true);
    // The README's "GATEWAY_ADMIN_TOKEN=…" and its shell examples' "$GATEWAY_KEY".
    expect(read('README.md')).toContain('GATEWAY_ADMIN_TOKEN=…');
    expect(isPlaceholder('…')).toBe(true);
    expect(isPlaceholder('$GATEWAY_KEY')).toBe(true);
  });

  it.each([
    'REPLACE-ME', 'replace_me', 'ReplaceMe', 'changeme', 'change-me', 'CHANGE_ME', 'change-me-please-0123456789abcdef', 'secret', 'SECRET', 'password', 'placeholder', 'todo', 'TBD',
    '<your-api-key>', '<REPLACE>', '${OPENAI_API_KEY}', '$OPENAI_API_KEY', '{{ .Values.apiKey }}', '[your key here]', '%API_KEY%',
    'xxx', 'XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX', '********', '00000000', 'sk-xxxxxxxxxxxxxxxx', 'sk-proj-XXXXXXXX', 'sk-ant-...', 'sk-…', 'abc...xyz',
    'your-api-key-here', 'YOUR_OPENAI_API_KEY', 'insert-your-key', 'put-your-secret-here', 'secretsecretsecretsecretsecretsecret', '"changeme"', ' REPLACE-ME ',
  ])('%j is a placeholder', (value) => expect(isPlaceholder(value)).toBe(true));

  it.each(['k', 'x', 'test-key', 'sk-openai-secret', 'gemini-secret', 'sk-good', 'mga-ledger-test-token', 'gateway-secret-at-the-idp', `sk-proj-${randomToken(48)}`, randomToken(43), 'c2VjcmV0IGJ5dGVzIGZyb20gb3BlbnNzbCByYW5kIQ=='])(
    '%j is not',
    (value) => expect(isPlaceholder(value)).toBe(false),
  );
});

describe("a provider's key", () => {
  it('what a template writes is refused; what a server that needs no key is given is not', () => {
    for (const v of ['REPLACE-ME', 'changeme', '<your-api-key>', '${OPENAI_API_KEY}', 'sk-...', 'your-api-key-here']) expect(credentialProblem(v, "openai's API key", undefined, undefined, true), v).not.toBeNull();
    for (const v of ['EMPTY', 'none', 'dummy', 'token', 'xxx', 'ollama', 'lm-studio', 'sk-no-key-required', 'not-needed']) expect(credentialProblem(v, "local's API key", undefined, undefined, true), v).toBeNull();
    // Any other credential of the config stays strict.
    expect(credentialProblem('none', 'a password')).not.toBeNull();
  });
});

describe('GATEWAY_SECRET and GATEWAY_ADMIN_TOKEN', () => {
  it('a placeholder, or a secret shorter than 32 bytes, is refused with what to do; a real one is not', () => {
    expect(secretProblems({ GATEWAY_SECRET: 'REPLACE-ME' })).toEqual([
      'GATEWAY_SECRET is a template\'s placeholder ("REPLACE-ME"), not a secret: set it to at least 32 random bytes (e.g. openssl rand -base64 32), the same on every instance, or unset it: the gateway then keeps its own (DATA_DIR/secret; with DATABASE_URL, in the database).',
    ]);
    const [short] = secretProblems({ GATEWAY_SECRET: 'correct-horse-battery' });
    expect(short).toMatch(/^GATEWAY_SECRET is 21 bytes long: .* must be at least 32 random bytes\. Set it to e\.g\. the output of openssl rand -base64 32/);
    // A short value is never quoted: it may be a real (weak) secret.
    expect(short).not.toContain('correct-horse-battery');
    expect(secretProblems({ GATEWAY_ADMIN_TOKEN: 'changeme' })).toEqual([expect.stringMatching(/^GATEWAY_ADMIN_TOKEN is a template's placeholder \("changeme"\), not a token: .* or unset it: the gateway then creates one in DATA_DIR\/admin-token\.$/)]);
    expect(secretProblems({ GATEWAY_SECRET: randomToken(32), GATEWAY_ADMIN_TOKEN: 'mga-short' })).toEqual([]);
    expect(secretProblems({})).toEqual([]);
  });

  it.each([
    [{ GATEWAY_SECRET: 'REPLACE-ME' }, /^GATEWAY_SECRET is a template's placeholder \("REPLACE-ME"\)/],
    [{ GATEWAY_SECRET: 'too-short' }, /^GATEWAY_SECRET is 9 bytes long/],
    [{ GATEWAY_ADMIN_TOKEN: '<admin token>' }, /^GATEWAY_ADMIN_TOKEN is a template's placeholder/],
  ])('the gateway does not start with %j', async (env, message) => {
    // Refused before DATA_DIR is made or anything opened.
    const dataDir = path.join(tmpdir(), `mg-never-${randomToken(8)}`);
    await expect(startGateway({ ...env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', GATEWAY_METADATA_FETCH: 'off' }, pino({ level: 'silent' }))).rejects.toThrow(message);
    expect(existsSync(dataDir)).toBe(false);
  });
});

describe("providers' keys", () => {
  it('a placeholder in the environment (no config file) is refused, naming the variable', () => {
    expect(problemsOf(() => loadConfig({ OPENAI_API_KEY: 'REPLACE-ME', ANTHROPIC_API_KEY: 'sk-ant-real' }, '/nonexistent-directory'))).toEqual([
      'OPENAI_API_KEY is a template\'s placeholder ("REPLACE-ME"), not openai\'s API key: set OPENAI_API_KEY to the real one, or unset it (a provider without a key is skipped, with a warning; a pool leaves that key out)',
    ]);
    // A short key is not refused: only placeholders are.
    expect(loadConfig({ OPENAI_API_KEY: 'k' }, '/nonexistent-directory').config.providers[0]!.api_key).toBe('k');
  });

  it('in a config file, at its line: from a variable (named), written in (quoted), in a key pool, and the other credentials', () => {
    const text = `providers:
  - { id: openai, type: openai, api_key: "\${OPENAI_API_KEY}" }
  - { id: anthropic, type: anthropic, api_key: changeme }
  - { id: pool, type: openai, api_keys: [sk-real-1, { key: "<second key>", alias: b }] }
web_search: { backend: brave, api_key: YOUR_BRAVE_KEY }
smtp: { host: smtp.example.com, from: "g@example.com", user: u, password: "\${SMTP_PASSWORD}" }
`;
    expect(problemsOf(() => parseConfig(text, 'gw.yaml', { OPENAI_API_KEY: 'REPLACE-ME', SMTP_PASSWORD: 'password' }))).toEqual([
      `gw.yaml:2:42 providers[0].api_key: OPENAI_API_KEY is a template's placeholder ("REPLACE-ME"), not openai's API key: set OPENAI_API_KEY to the real one, or unset it (a provider without a key is skipped, with a warning; a pool leaves that key out)`,
      `gw.yaml:3:48 providers[1].api_key: "changeme" is a template's placeholder, not anthropic's API key: write the real one (better: read it from the environment, \${NAME}), or unset it (a provider without a key is skipped, with a warning; a pool leaves that key out)`,
      `gw.yaml:4:60 providers[2].api_keys[1].key: "<second key>" is a template's placeholder, not pool's API key: write the real one (better: read it from the environment, \${NAME}), or unset it (a provider without a key is skipped, with a warning; a pool leaves that key out)`,
      `gw.yaml:5:40 web_search.api_key: "YOUR_BRAVE_KEY" is a template's placeholder, not a search API key: write the real one (better: read it from the environment, \${NAME}), or leave it out`,
      `gw.yaml:6:75 smtp.password: SMTP_PASSWORD is a template's placeholder ("password"), not a password: set SMTP_PASSWORD to the real one, or leave it out`,
    ]);
    expect(() => parseConfig(minimalConfig, 'gw.yaml', {})).not.toThrow();
  });

  it("the Kubernetes template's Secret, applied as it is, stops the gateway at its config", () => {
    const secret = parse(read('deploy/kubernetes/secret.yaml')) as { stringData: Record<string, string> };
    const problems = problemsOf(() => parseConfig(read('deploy/gateway.config.yaml'), 'deploy/gateway.config.yaml', secret.stringData));
    expect(problems).toHaveLength(4);
    for (const name of ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GEMINI_API_KEY', 'OPENROUTER_API_KEY']) expect(problems.join('\n')).toContain(`${name} is a template's placeholder ("REPLACE-ME")`);
    expect(secretProblems(secret.stringData)).toEqual([expect.stringMatching(/^GATEWAY_SECRET is a template's placeholder \("REPLACE-ME"\)/)]);
  });
});
