// The text examples of the README and the user guide name models a new user can call: each exists
// in gateway.config.example.yaml and in the built-in defaults (no config file, every provider key
// set), on the lowest plan (a new user's), so following them never answers model_not_found or
// 403 model_requires_higher_plan.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configFromEnvironment } from '../../server/boot/environment-config.ts';
import { loadConfig, parseConfig } from '../../server/boot/config.ts';
import type { ResolvedConfig } from '../../server/config/schema.ts';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

/** The models named in the code blocks of a Markdown section (`"model": "x"` and `model: 'x'`). */
function exampleModels(markdown: string, heading: string): string[] {
  const start = markdown.indexOf(`\n${heading}\n`);
  expect(start, heading).toBeGreaterThan(0);
  const end = markdown.indexOf('\n## ', start + 1);
  const blocks = [...markdown.slice(start, end < 0 ? undefined : end).matchAll(/```[a-z]*\n([\s\S]*?)```/g)].map((m) => m[1]!).join('\n');
  return [...new Set([...blocks.matchAll(/"model":\s*"([^"]+)"|model:\s*'([^']+)'/g)].map((m) => m[1] ?? m[2]!))];
}

/** Why a new user (the default plan) cannot call `model` in `config`, or null. */
function refusal(config: ResolvedConfig, model: string): string | null {
  const m = config.models.find((x) => x.id === model);
  if (!m) return 'not in the catalog';
  const rank = (plan: string) => config.plans.find((p) => p.id === plan)!.rank;
  return m.premium && rank(m.required_plan) > rank(config.defaultPlan) ? `premium: needs ${m.required_plan}` : null;
}

const example = parseConfig(read('gateway.config.example.yaml'), 'gateway.config.example.yaml', {});
const allKeys = { OPENAI_API_KEY: 'k', ANTHROPIC_API_KEY: 'k', GEMINI_API_KEY: 'k', ELEVENLABS_API_KEY: 'k', OPENROUTER_API_KEY: 'k' };
// Every variable configFromEnvironment reads is set, so the defaults' whole list is there.
expect(configFromEnvironment(allKeys).enabled).toHaveLength(Object.keys(allKeys).length);
const defaults = loadConfig(allKeys, '/nonexistent-directory').config;

describe.each([
  ['README.md', '## Text generation'],
  ['docs/api.md', '## Text: chat completions, Messages, Responses'],
])('%s, %s', (file, heading) => {
  const models = exampleModels(read(file), heading);

  it('names models', () => expect(models.length).toBeGreaterThan(0));

  it.each([
    ['gateway.config.example.yaml', example],
    ['the defaults', defaults],
  ])('every one of them works for a new user with %s', (_name, config) => {
    expect(models.map((m) => [m, refusal(config, m)])).toEqual(models.map((m) => [m, null]));
  });
});
