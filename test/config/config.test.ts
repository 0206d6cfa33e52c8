import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { expect, it } from 'vitest';
import { ConfigError, loadConfig, parseConfig } from '../../server/boot/config.ts';
import { GatewayConfigShape } from '../../server/config/schema.ts';
import { configWarnings } from '../../server/boot/warnings.ts';

const exampleText = readFileSync(new URL('../../gateway.config.example.yaml', import.meta.url), 'utf8');
const lineOf = (needle: string) => exampleText.split('\n').findIndex((l) => l.includes(needle)) + 1;

const problems = (text: string, env: NodeJS.ProcessEnv = {}, file = 'gw.yaml') => {
  try {
    parseConfig(text, file, env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
};

it('the shipped example is valid and covers every provider type', () => {
  const cfg = parseConfig(exampleText, 'example', {});
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
  // Every mistake in one pass: the unknown provider is reported although the shape is wrong too.
  expect(problems(text)).toEqual([
    'gw.yaml:4:5 models[0].endpoint: required field missing (expected one of "chat"|"messages"|"responses"|"generate_content"|"images"|"video"|"speech"|"transcription"|"embeddings"|"moderation")',
    'gw.yaml:5:29 models[0].upstreams[0].provider: unknown provider "nope" (known: p)',
  ]);
  expect(problems(text.replace('- id: m', '- id: m\n    endpoint: chat'))).toEqual(['gw.yaml:6:29 models[0].upstreams[0].provider: unknown provider "nope" (known: p)']);
});

it('reports every error at once, in file order: shapes, unknown providers and plans, unknown fields', () => {
  const text = `providers:
  - { id: p, type: openia }
  - { id: p, type: openai }
models:
  - id: m
    endpoint: chat
    required_plan: gold
    upstreams: [{ provider: nope, model: x }]
plans:
  - { id: free, rank: 0, daily_tokens: -1, requests_per_minute: 10 }
default_plan: silver
modle: []
`;
  expect(problems(text)).toEqual([
    'gw.yaml:2:20 providers[0].type: Invalid option: expected one of "openai"|"openai-compatible"|"anthropic"|"gemini"|"elevenlabs"',
    'gw.yaml:3:11 providers[1].id: duplicate provider id "p"',
    'gw.yaml:7:20 models[0].required_plan: unknown plan "gold" (known: free)',
    'gw.yaml:8:29 models[0].upstreams[0].provider: unknown provider "nope" (known: p)',
    'gw.yaml:10:40 plans[0].daily_tokens: Too small: expected number to be >=0',
    'gw.yaml:11:15 default_plan: unknown plan "silver" (known: free)',
    'gw.yaml:12:1 modle: unknown field (did you mean models?)',
  ]);
});

it('points an unknown field at its own line, top level or nested, and names the close one', () => {
  expect(problems('providers: []\nmodle: []\n')).toEqual(['gw.yaml:2:1 modle: unknown field (did you mean models?)']);
  expect(problems('providers:\n  - id: o\n    type: openai\n    apikey: sk\n')).toEqual(['gw.yaml:4:5 providers[0].apikey: unknown field (did you mean api_key?)']);
  expect(problems('catalog_metadata:\n  poe: { enabled: true, uri: x }\n')).toEqual(['gw.yaml:2:25 catalog_metadata.poe.uri: unknown field (did you mean url?)']);
  expect(problems('colour: blue\n')).toEqual([
    'gw.yaml:1:1 colour: unknown field (known: providers, models, plans, default_plan, key_cache_ttl_ms, allow_private_image_urls, client_disconnect_drain_ms, reservation_ttl_ms, web_search_surcharge_tokens, budget_unpriced_models, jobs, ledger, request_log, routing, budget_alerts, auth, catalog_metadata, public_url, smtp, web_search, trust_proxy)',
  ]);
});

it('YAML syntax errors: file:line:col and the message, without the excerpt or a dangling colon', () => {
  expect(problems('providers: [\n')).toEqual(['gw.yaml:2:1: Flow sequence in block collection must be sufficiently indented and end with a ]']);
  expect(problems('providers:\n  - id: x\n type: y\n')).toEqual(['gw.yaml:3:1: All mapping items must start at the same column']);
  expect(problems('a: 1\na: 2\n')).toEqual(['gw.yaml:2:1: Map keys must be unique']);
});

it('a .json file is parsed as JSON: JSON syntax errors with line:col, fields located as in YAML', () => {
  const json = (text: string) => problems(text, {}, 'gw.json');
  expect(json('{\n  "providers": [\n    { "id": "p", "type": "openai", }\n  ]\n}\n')).toEqual(["gw.json:3:36: invalid JSON: expected a property name (no comma before '}'), found '}'"]);
  expect(json('{\n  "providers": [\n    { "id": "p" }\n  \n')).toEqual(["gw.json:5:1: invalid JSON: expected ',' or ']' after an array element, found the end of the file"]);
  expect(json('{ "key_cache_ttl_ms": }')).toEqual(["gw.json:1:23: invalid JSON: expected a value, found '}'"]);
  expect(json("{ 'providers': [] }")).toEqual(["gw.json:1:3: invalid JSON: expected a double-quoted property name, found '''"]);
  expect(json('{ "providers": [], "providers": [] }')).toEqual(['gw.json:1:20: duplicate key in a JSON object']);
  expect(json('{\n  "providers": [{ "id": "p", "type": "openia" }],\n  "modle": []\n}\n')).toEqual([
    'gw.json:2:38 providers[0].type: Invalid option: expected one of "openai"|"openai-compatible"|"anthropic"|"gemini"|"elevenlabs"',
    'gw.json:3:3 modle: unknown field (did you mean models?)',
  ]);
  expect(parseConfig('{ "providers": [{ "id": "p", "type": "openai", "api_key": "${K}" }] }', 'gw.json', { K: 'sk' }).providers[0]!.api_key).toBe('sk');
});

it('a field whose whole value is one ${VAR:-} that comes out empty is not written', () => {
  const cfg = parseConfig('public_url: ${PUBLIC_URL:-}\nproviders: [{ id: o, type: openai, api_key: "${KEY:-}", headers: { X-A: "${A:-}", X-B: "b${A:-}" } }]\n', 'gw.yaml', {});
  expect(cfg.publicUrl).toBeUndefined();
  expect(cfg.providers[0]!.api_key).toBeUndefined();
  expect(cfg.providers[0]!.headers).toEqual({ 'X-B': 'b' });
  expect(parseConfig('public_url: ${PUBLIC_URL:-}\n', 'gw.yaml', { PUBLIC_URL: 'https://gw.example/' }).publicUrl).toBe('https://gw.example');
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

it('sign-in throttling defaults to 5 failures per account, 20 per address, 20 sign-ups per address and 3 reset mails per email (10 per address) in 15 minutes', () => {
  expect(parseConfig('providers: []\nmodels: []\n', 'gw.yaml', {}).auth.local.throttle).toEqual({
    window_minutes: 15,
    failures_per_account: 5,
    failures_per_address: 20,
    signups_per_address: 20,
    resets_per_account: 3,
    resets_per_address: 10,
  });
  expect(parseConfig('auth: { local: { throttle: { failures_per_account: 3 } } }\n', 'gw.yaml', {}).auth.local).toMatchObject({ enabled: true, throttle: { failures_per_account: 3, failures_per_address: 20 } });
});

/**
 * Every field path the schema accepts that the example does not show. Arrays step into their
 * element; a discriminated union inside a list (sign-in providers) must show every variant, a
 * single one (web_search) the variant it uses; a field counts when it is written in the example.
 */
function missingFromExample(schema: z.ZodType, values: unknown[], at: string, inList = false): string[] {
  type Def = { type: string; shape?: Record<string, z.ZodType>; element?: z.ZodType; innerType?: z.ZodType; in?: z.ZodType; options?: z.ZodType[]; discriminator?: string; values?: unknown[] };
  const def = (s: z.ZodType) => (s as unknown as { _zod: { def: Def } })._zod.def;
  let s = schema;
  while (def(s).innerType || (def(s).type === 'pipe' && def(s).in)) s = def(s).innerType ?? def(s).in!;
  const d = def(s);
  const objects = values.filter((v): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v));
  if (d.type === 'object') {
    return Object.entries(d.shape!).flatMap(([key, field]) => {
      const present = objects.filter((o) => key in o).map((o) => o[key]);
      return present.length ? missingFromExample(field, present, `${at}.${key}`) : [`${at}.${key}`.replace(/^\./, '')];
    });
  }
  if (d.type === 'array') return missingFromExample(d.element!, values.filter(Array.isArray).flat(), `${at}[]`, true);
  if (d.type === 'union' && d.discriminator) {
    return d.options!.flatMap((option) => {
      const tag = (def(option).shape![d.discriminator!] as unknown as { _zod: { def: Def } })._zod.def.values![0];
      const matching = objects.filter((o) => o[d.discriminator!] === tag);
      if (!matching.length) return inList ? [`${at}(${d.discriminator}: ${String(tag)})`.replace(/^\./, '')] : [];
      return missingFromExample(option, matching, at);
    });
  }
  if (d.type === 'union') return d.options!.flatMap((option) => missingFromExample(option, values, at, inList));
  return [];
}

/** What the example's variables are set to when they all are: 'x', unless the field wants a URL, a path or a long secret. */
const variableValues: Record<string, string> = {
  PUBLIC_URL: 'https://gateway.example',
  CATALOG_SNAPSHOT: './snapshot.json',
  BUDGET_ALERTS_WEBHOOK_URL: 'https://hooks.example/budget',
  // Long, and not a template's placeholder (xxx… would be refused: server/config/placeholders.ts).
  BUDGET_ALERTS_SECRET: '0123456789abcdef'.repeat(2),
};

it('the example shows every field of the schema, loads as it is, and loads with every variable set', () => {
  expect(missingFromExample(GatewayConfigShape, [parseDocument(exampleText).toJS()], '')).toEqual([]);
  // The walk itself notices a missing field and a missing variant.
  const without = exampleText.replace(/^reservation_ttl_ms: .*$/m, '').replace('- type: oidc', '- type: discord');
  expect(without).not.toBe(exampleText);
  expect(missingFromExample(GatewayConfigShape, [parseDocument(without.replace(/^\s*issuer: .*$/m, '')).toJS()], '')).toEqual(
    expect.arrayContaining(['reservation_ttl_ms', 'auth.providers[](type: oidc)']),
  );

  const env = Object.fromEntries(
    [...exampleText.matchAll(/\$\{([A-Z_]+)/g)].map(([, name]) => [name, variableValues[name!] ?? 'x']),
  );
  const full = parseConfig(exampleText, '/srv/gateway.config.yaml', env);
  expect(configWarnings(full)).toEqual([]);
  expect(full.auth.providers.map((p) => p.type)).toEqual(['discord', 'oidc', 'oauth2']);
  expect(full.publicUrl).toBe('https://gateway.example');
  expect(full.catalogMetadata.snapshot).toBe('/srv/snapshot.json');
});

it('warnings: providers without the key they need, models none of whose upstreams can work, sign-in providers that are off', () => {
  const cfg = parseConfig(exampleText, 'example.yaml', {});
  expect(configWarnings(cfg)).toEqual([
    `example.yaml:${lineOf('- type: discord')}:7 auth.providers[0]: sign-in provider discord has no client_id: it is off`,
    `example.yaml:${lineOf('- type: oidc')}:7 auth.providers[1]: sign-in provider google has no client_id: it is off`,
    `example.yaml:${lineOf('- type: oauth2')}:7 auth.providers[2]: sign-in provider github has no client_id: it is off`,
    'provider openai has no api_key: its upstreams are skipped',
    'provider anthropic has no api_key: its upstreams are skipped',
    'provider gemini has no api_key: its upstreams are skipped',
    'provider elevenlabs has no api_key: its upstreams are skipped',
    'provider openai-pool has no api_key: its upstreams are skipped',
    'model claude-sonnet-4-5 has no upstream that can serve it: anthropic has no api_key',
    'model claude-haiku-4-5 has no upstream that can serve it: anthropic has no api_key',
    'model gemini-2.5-flash has no upstream that can serve it: gemini has no api_key',
    'model gpt-image-1 has no upstream that can serve it: openai has no api_key',
    'model dall-e-3 has no upstream that can serve it: openai has no api_key',
    'model gemini-3-pro-image-preview has no upstream that can serve it: gemini has no api_key',
    'model veo-3.1-generate-preview has no upstream that can serve it: gemini has no api_key',
    'model tts-1 has no upstream that can serve it: openai has no api_key',
    'model eleven_flash_v2 has no upstream that can serve it: elevenlabs has no api_key',
    'model gemini-2.5-flash-preview-tts has no upstream that can serve it: gemini has no api_key',
    'model whisper-1 has no upstream that can serve it: openai has no api_key',
    'model scribe_v2 has no upstream that can serve it: elevenlabs has no api_key',
    'model text-embedding-3-small has no upstream that can serve it: openai has no api_key',
    'model omni-moderation-latest has no upstream that can serve it: openai has no api_key',
    'smtp is set but public_url is not: password-reset mails would link to the address the gateway listens on; set public_url to the address users open',
  ]);
  // gpt-4o-mini is not listed: its second upstream (OpenRouter, OpenAI-compatible) may work keyless.
  const warnings = (text: string) => configWarnings(parseConfig(text, 'gw.yaml', {}));
  expect(
    warnings(`providers:
  - { id: a, type: anthropic, headers: { X-Api-Key: sk } }
  - { id: g, type: gemini }
models:
  - { id: emb, endpoint: embeddings, upstreams: [{ provider: g, model: x }] }
  - { id: chat, endpoint: chat, upstreams: [{ provider: a, model: x }, { provider: g, model: y }] }
`),
  ).toEqual(['provider g has no api_key: its upstreams are skipped', 'model emb has no upstream that can serve it: g has no api_key']);
  expect(warnings('ledger: { retention_days: 90, aggregate_retention_days: 30 }\n')).toEqual([
    'ledger.aggregate_retention_days (30) is shorter than ledger.retention_days (90): usage reports lose days whose raw rows are still kept; keep the daily sums at least as long',
  ]);
  expect(warnings('ledger: { retention_days: 400 }\n')).toEqual([]);
});

it('an upstream whose provider type cannot serve the model’s endpoint is a config error (the registry decides), at its line', () => {
  const text = `providers:
  - { id: a, type: anthropic, api_key: k }
  - { id: e, type: elevenlabs, api_key: k }
  - { id: o, type: openai, api_key: k }
models:
  - { id: mod, endpoint: moderation, upstreams: [{ provider: o, model: m }, { provider: a, model: x }] }
  - { id: emb, endpoint: embeddings, upstreams: [{ provider: e, model: x }] }
  - { id: img, endpoint: images, upstreams: [{ provider: a, model: x }] }
  - { id: vid, endpoint: video, upstreams: [{ provider: o, model: sora-2 }] }
`;
  let err: unknown;
  try {
    parseConfig(text, 'gw.yaml', {});
  } catch (e) {
    err = e;
  }
  expect((err as { problems: string[] }).problems).toEqual([
    'gw.yaml:6:89 models[0].upstreams[1].provider: provider "a" is anthropic, which cannot serve moderation (served by: openai, openai-compatible)',
    'gw.yaml:7:62 models[1].upstreams[0].provider: provider "e" is elevenlabs, which cannot serve embeddings (served by: openai, openai-compatible, gemini)',
    'gw.yaml:8:58 models[2].upstreams[0].provider: provider "a" is anthropic, which cannot serve images (served by: openai, openai-compatible, gemini)',
    // OpenAI's video API (Sora) was shut down: no adapter.
    'gw.yaml:9:57 models[3].upstreams[0].provider: provider "o" is openai, which cannot serve video (served by: openai-compatible, gemini)',
  ]);
});

it('routing mistakes are config errors at their line: an unknown strategy, weights that sum to nothing, a key pool beside api_key, a key or an alias twice (never quoting a key)', () => {
  const text = `providers:
  - { id: o, type: openai, api_key: k, api_keys: [k2] }
  - id: pool
    type: openai
    api_keys: [sk-secret-1, { key: sk-secret-2, alias: main }, { key: sk-secret-1, alias: main }, { key: sk-3, alias: "1x" }]
models:
  - { id: a, endpoint: chat, strategy: fastest, upstreams: [{ provider: pool, model: m }] }
  - { id: b, endpoint: chat, strategy: weighted, upstreams: [{ provider: pool, model: m, weight: 0 }, { provider: o, model: m, weight: 0 }] }
  - { id: c, endpoint: chat, upstreams: [{ provider: pool, model: m, weight: -1 }] }
`;
  let err: unknown;
  try {
    parseConfig(text, 'gw.yaml', {});
  } catch (e) {
    err = e;
  }
  const problems = (err as { problems: string[] }).problems;
  expect(problems).toEqual([
    'gw.yaml:2:50 providers[0].api_keys: set api_key or api_keys, not both (a single key is a pool of one)',
    "gw.yaml:5:64 providers[1].api_keys[2]: the same key as api_keys[0]: each key of a pool once",
    "gw.yaml:5:91 providers[1].api_keys[2].alias: alias \"main\" is already api_keys[1]'s",
    'gw.yaml:5:119 providers[1].api_keys[3].alias: a name: a letter, then letters, digits and . _ - (at most 64)',
    'gw.yaml:7:40 models[0].strategy: one of failover, weighted, least-latency, least-busy',
    'gw.yaml:8:40 models[1].strategy: strategy weighted needs an upstream whose weight is above 0 (every weight is 0)',
    'gw.yaml:9:78 models[2].upstreams[0].weight: Too small: expected number to be >=0',
  ]);
  expect(problems.join('\n')).not.toContain('sk-secret');
});
