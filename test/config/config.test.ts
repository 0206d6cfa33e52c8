import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { ConfigError, loadConfig, parseConfig } from '../../server/config/load.ts';

const problems = (text: string, env: NodeJS.ProcessEnv = {}) => {
  try {
    parseConfig(text, 'gw.yaml', env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
};

it('the shipped example is valid and covers every provider type', () => {
  const cfg = parseConfig(readFileSync(new URL('../../gateway.config.example.yaml', import.meta.url), 'utf8'), 'example', {});
  expect(new Set(cfg.providers.map((p) => p.type))).toEqual(new Set(['openai', 'anthropic', 'gemini', 'elevenlabs', 'openai-compatible']));
  expect(cfg.plans.map((p) => p.id)).toEqual(['free', 'pro']);
});

it('points at the line and field of a bad value', () => {
  const text = `providers:
  - id: openai
    type: openia
models: []
`;
  expect(problems(text)).toEqual([expect.stringMatching(/^gw\.yaml:3:11 providers\[0\]\.type: Invalid option/)]);
});

it('reports a missing field at the object that lacks it, and unknown references', () => {
  const text = `providers:
  - { id: p, type: openai }
models:
  - id: m
    upstreams: [{ provider: nope, model: x }]
`;
  expect(problems(text)).toEqual([expect.stringMatching(/^gw\.yaml:4:5 models\[0\]\.endpoint: required field missing \(expected one of "chat"/)]);
  // Cross-references are checked once the shapes are right.
  expect(problems(text.replace('- id: m', '- id: m\n    endpoint: chat'))).toEqual([
    expect.stringMatching(/^gw\.yaml:6:29 models\[0\]\.upstreams\[0\]\.provider: unknown provider "nope" \(known: p\)/),
  ]);
});

it('rejects unknown keys (typos) and YAML syntax errors with a position', () => {
  expect(problems('providers: []\nmodle: []\n')).toEqual([expect.stringMatching(/^gw\.yaml:1:1 \(top level\): Unrecognized key: "modle"/)]);
  expect(problems('providers: [\n')[0]).toMatch(/^gw\.yaml:\d+:\d+: /);
});

it('reads ${VAR} from the environment, with defaults, and names an unset one', () => {
  const text = 'providers:\n  - { id: o, type: openai, api_key: "${KEY}", base_url: "${URL:-https://api.openai.com/v1}" }\n';
  const cfg = parseConfig(text, 'gw.yaml', { KEY: 'sk-1' });
  expect(cfg.providers[0]).toMatchObject({ api_key: 'sk-1', base_url: 'https://api.openai.com/v1' });
  expect(problems(text)).toEqual([expect.stringMatching(/^gw\.yaml:2:\d+ providers\[0\]\.api_key: environment variable KEY is not set/)]);
});

it('defaults required_plan and the default plan to the lowest rank', () => {
  const cfg = parseConfig(
    `providers: [{ id: o, type: openai }]
models: [{ id: m, endpoint: chat, upstreams: [{ provider: o, model: m }] }]
plans:
  - { id: gold, rank: 5, daily_tokens: 10, requests_per_minute: 1 }
  - { id: basic, rank: 1, daily_tokens: 10, requests_per_minute: 1 }
`,
    'gw.yaml',
    {},
  );
  expect(cfg.defaultPlan).toBe('basic');
  expect(cfg.models[0]!.required_plan).toBe('basic');
  expect(cfg.plans.map((p) => p.id)).toEqual(['basic', 'gold']);
});

it('without a config file, enables each built-in provider whose key is in the environment', () => {
  const { config, enabledFromEnv } = loadConfig({ ANTHROPIC_API_KEY: 'a', OPENROUTER_API_KEY: 'o' }, '/nonexistent-dir');
  expect(enabledFromEnv).toEqual(['anthropic', 'openrouter']);
  expect(config.providers.map((p) => [p.id, p.type])).toEqual([
    ['anthropic', 'anthropic'],
    ['openrouter', 'openai-compatible'],
  ]);
  expect(config.models.map((m) => m.id)).toContain('claude-sonnet-4-5');
  expect(config.plans.map((p) => p.id)).toEqual(['free', 'pro']);
  expect(loadConfig({}, '/nonexistent-dir').config.models).toEqual([]);
});

it('GATEWAY_CONFIG naming a missing file is an error', () => {
  expect(() => loadConfig({ GATEWAY_CONFIG: '/nonexistent.yaml' })).toThrow(ConfigError);
});

it('trust_proxy: false by default; true, a hop count, or addresses and CIDR ranges; TRUST_PROXY overrides it', () => {
  const base = 'providers: []\nmodels: []\n';
  const trust = (text: string, env: NodeJS.ProcessEnv = {}) => parseConfig(base + text, 'gw.yaml', env).trustProxy;
  expect(trust('')).toBe(false);
  expect(trust('trust_proxy: 2\n')).toBe(2);
  expect(trust('trust_proxy: ["10.0.0.0/8", "::1", loopback]\n')).toEqual(['10.0.0.0/8', '::1', 'loopback']);
  expect(trust('', { TRUST_PROXY: 'true' })).toBe(true);
  expect(trust('trust_proxy: true\n', { TRUST_PROXY: '10.0.0.1, 192.168.0.0/16' })).toEqual(['10.0.0.1', '192.168.0.0/16']);
  expect(trust('trust_proxy: true\n', { TRUST_PROXY: 'false' })).toBe(false);
  expect(problems(base + 'trust_proxy: ["10.0.0.300"]\n')).toEqual([expect.stringMatching(/^gw\.yaml:3:15 trust_proxy\[0\]: expected an IP address/)]);
  expect(problems(base, { TRUST_PROXY: 'proxy.example' })).toEqual([expect.stringMatching(/^TRUST_PROXY=proxy\.example: expected an IP address/)]);
});

it('sign-in throttling defaults to 5 failures per account, 20 per address and 20 sign-ups per address in 15 minutes', () => {
  expect(parseConfig('providers: []\nmodels: []\n', 'gw.yaml', {}).auth.local.throttle).toEqual({ window_minutes: 15, failures_per_account: 5, failures_per_address: 20, signups_per_address: 20 });
  expect(parseConfig('auth: { local: { throttle: { failures_per_account: 3 } } }\n', 'gw.yaml', {}).auth.local).toMatchObject({ enabled: true, throttle: { failures_per_account: 3, failures_per_address: 20 } });
});
