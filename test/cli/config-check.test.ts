// `config check` as an operator (or a script) runs it, a separate process: one JSON document on
// stdout with --json whatever happened, errors included, and the exit code; the environment's
// secrets checked as serve checks them; the warnings serve logs, open sign-up on an exposed address
// and models a budget would refuse among them (decision 0033). serve's own start-up warning too.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../server/boot/config.ts';
import { signupWarnings } from '../../server/boot/warnings.ts';
import { minimalConfig, startTestGateway } from '../helpers/gateway.ts';

const bin = new URL('../../bin/model-gateway.mjs', import.meta.url).pathname;
const run = promisify(execFile);
let dir: string;

async function check(env: NodeJS.ProcessEnv, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, 'config', 'check', ...args], { env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dir, ...env } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
const file = (name: string, text: string) => {
  const f = path.join(dir, name);
  writeFileSync(f, text);
  return f;
};

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'mg-config-check-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const OPEN = `${minimalConfig}auth: { local: { allow_signup: true } }\n`;
const EXPOSED =
  'sign-up is open to anyone through the sign-up form (auth.local.allow_signup: true), and it listens on 0.0.0.0 (HOST, the default), reachable from other machines. ' +
  'Each new account gets the free plan (1000 tokens a day per key) on your provider keys. If that is not intended, remove that setting (sign-up is then closed: invite users with model-gateway users create and users reset-link), or set HOST=127.0.0.1 to keep the gateway to this machine.';

describe('config check --json', () => {
  it('errors: one JSON document on stdout (valid false, every error), nothing on stderr, exit code 2', async () => {
    const broken = file('broken.yaml', 'providers:\n  - { id: p, type: nope }\nmodles: []\n');
    const r = await check({}, '--file', broken, '--json');
    expect(r).toMatchObject({ code: 2, stderr: '' });
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ valid: false, source: broken, warnings: [] });
    expect(doc.errors).toEqual([expect.stringContaining(`${broken}:2:20 providers[0].type`), expect.stringContaining(`${broken}:3:1 modles: unknown field`)]);
    expect(doc.error).toEqual({ type: 'config_error', message: `invalid configuration in ${broken}\n${doc.errors.map((e: string) => `  - ${e}`).join('\n')}`, problems: doc.errors });
  });

  it('a file that cannot be read is an error in the same document', async () => {
    const missing = path.join(dir, 'nope.yaml');
    const r = await check({}, '--file', missing, '--json');
    expect(r).toMatchObject({ code: 2, stderr: '' });
    expect(JSON.parse(r.stdout)).toMatchObject({ valid: false, errors: [`${missing}: no such file`] });
  });

  it("the environment's secrets are checked as serve checks them: a placeholder GATEWAY_SECRET makes a valid file fail", async () => {
    const ok = file('ok.yaml', minimalConfig);
    const r = await check({ GATEWAY_SECRET: 'REPLACE-ME' }, '--file', ok, '--json');
    expect(r).toMatchObject({ code: 2, stderr: '' });
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ valid: false, source: ok, errors: [expect.stringMatching(/^GATEWAY_SECRET is a template's placeholder \("REPLACE-ME"\), not a secret: set it to at least 32 random bytes/)] });
    // Without --json: the same on stderr, for people.
    const human = await check({ GATEWAY_SECRET: 'short' }, '--file', ok);
    expect(human.code).toBe(2);
    expect(human.stdout).toBe('');
    expect(human.stderr).toMatch(/^invalid environment\n {2}- GATEWAY_SECRET is 5 bytes long: /);
  });

  it('valid: the summary with no errors and the warnings, exit code 0', async () => {
    const r = await check({ HOST: '127.0.0.1' }, '--file', file('fine.yaml', minimalConfig), '--json');
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(r.stdout)).toMatchObject({ valid: true, errors: [], warnings: [] });
  });
});

describe('warnings about who may sign up', () => {
  it('open sign-up on the default address (0.0.0.0) is warned about, naming the setting; the defaults, or HOST on loopback, are not', async () => {
    const open = file('open.yaml', OPEN);
    expect(JSON.parse((await check({}, '--file', open, '--json')).stdout).warnings).toEqual([EXPOSED]);
    const human = await check({}, '--file', open);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`warnings:\n  - ${EXPOSED}`);
    expect(JSON.parse((await check({ HOST: '127.0.0.1' }, '--file', open, '--json')).stdout).warnings).toEqual([]);
    expect(JSON.parse((await check({}, '--file', file('closed.yaml', minimalConfig), '--json')).stdout).warnings).toEqual([]);
  });

  it('what opens it, and where it is reachable from, are named', () => {
    const cfg = (auth: string, extra = '') => parseConfig(`${minimalConfig}${extra}auth:\n${auth}`, 'gw.yaml', {});
    const domains = cfg('  local: { signup_email_domains: [example.org] }\n', 'smtp: { host: smtp.example.com, from: "g@example.com" }\n');
    expect(signupWarnings(domains, { HOST: '::' })).toEqual([
      expect.stringMatching(/^sign-up is open to any address at example\.org through the sign-up form \(auth\.local\.signup_email_domains: \[example\.org\]\), and it listens on :: \(HOST\), reachable from other machines\./),
    ]);
    // Domains without smtp: only sign-in providers could use them; with none, nothing is open.
    expect(signupWarnings(cfg('  local: { signup_email_domains: [example.org] }\n'), {})).toEqual([]);
    const providers = '  providers: [{ id: corp, type: oauth2, authorization_endpoint: "https://idp.example/a", token_endpoint: "https://idp.example/t", userinfo_endpoint: "https://idp.example/u", client_id: gw }]\n';
    // A provider alone creates no account (closed); with allow_signup it creates one for anyone.
    expect(signupWarnings(cfg(providers), {})).toEqual([]);
    expect(signupWarnings(cfg(`  local: { enabled: false, allow_signup: true }\n${providers}`), {})).toEqual([expect.stringMatching(/^sign-up is open to anyone through sign-in with corp \(auth\.local\.allow_signup: true\), and it listens on 0\.0\.0\.0/)]);
    // On loopback, but behind a trusted proxy: others reach it through the proxy.
    expect(signupWarnings(cfg('  local: { allow_signup: true }\n', 'trust_proxy: [loopback]\n'), { HOST: '127.0.0.1' })).toEqual([
      expect.stringContaining('and it listens on 127.0.0.1 (HOST) but trusts a proxy in front (trust_proxy), which brings others\' requests.'),
    ]);
  });

  it('serve logs the same warning at start-up', async () => {
    const lines: string[] = [];
    const gw = await startTestGateway({ config: `${OPEN}trust_proxy: [loopback]\n`, logger: pino({ level: 'info' }, { write: (l: string) => void lines.push(l) }) });
    try {
      const said = lines.map((l) => JSON.parse(l) as { level: number; msg: string });
      expect(said.filter((l) => l.level === 40).map((l) => l.msg)).toEqual([expect.stringMatching(/^sign-up is open to anyone through the sign-up form \(auth\.local\.allow_signup: true\), and it listens on 127\.0\.0\.1 \(HOST\) but trusts a proxy/)]);
      expect(said).toContainEqual(expect.objectContaining({ level: 30, msg: 'sign-up: open to anyone through the sign-up form (auth.local.allow_signup: true)' }));
    } finally {
      await gw.close();
    }
  });
});

describe('warnings about budgets', () => {
  it('a plan with spend budgets that would refuse a configured model names the plan and the model', async () => {
    const text = `providers:
  - { id: openai, type: openai, api_key: sk-test }
models:
  - { id: priced, endpoint: chat, pricing: { prompt: "0.000001", completion: "0.000002" }, upstreams: [{ provider: openai, model: a }] }
  - { id: unpriced, endpoint: chat, upstreams: [{ provider: openai, model: b }] }
  - { id: half-priced, endpoint: chat, pricing: { prompt: "0.000001" }, upstreams: [{ provider: openai, model: c }] }
  - { id: embed, endpoint: embeddings, pricing: { prompt: "0.00000002" }, upstreams: [{ provider: openai, model: d }] }
  - { id: picture, endpoint: images, upstreams: [{ provider: openai, model: e }] }
  - { id: premium, endpoint: chat, premium: true, required_plan: pro, upstreams: [{ provider: openai, model: f }] }
plans:
  - { id: free, rank: 0, daily_tokens: 1000, requests_per_minute: 10, daily_budget_usd: "1" }
  - { id: pro, rank: 1, daily_tokens: 1000, requests_per_minute: 10 }
`;
    const r = await check({ HOST: '127.0.0.1' }, '--file', file('budgets.yaml', text), '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).warnings).toEqual([
      "plan free has spend budgets and budget_unpriced_models is refuse, but models unpriced, half-priced, picture have no price in the config: their requests on this plan are refused (403 model_price_unknown) unless the catalog metadata (OpenRouter's list, once fetched) gives one. Give each a pricing, or set budget_unpriced_models: allow",
    ]);
    const allowed = await check({ HOST: '127.0.0.1' }, '--file', file('allowed.yaml', `${text}budget_unpriced_models: allow\n`), '--json');
    expect(JSON.parse(allowed.stdout).warnings).toEqual([]);
  });
});
