// The text examples of the README and the user guide name models a new user can call: each exists
// in gateway.config.example.yaml and in the built-in defaults (no config file, every provider key
// set), on the lowest plan (a new user's), so following them never answers model_not_found or
// 403 model_requires_higher_plan; and the example, whose free plan has spend budgets, prices every
// model, so they are not refused as 403 model_price_unknown offline either (no OpenRouter list):
// run through a gateway with the example as shipped, its providers pointed at fake upstreams.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configFromEnvironment } from '../../server/boot/environment-config.ts';
import { loadConfig, parseConfig } from '../../server/boot/config.ts';
import { configWarnings, unpricedUnderBudget } from '../../server/boot/warnings.ts';
import type { ResolvedConfig } from '../../server/config/schema.ts';
import { startFakeUpstreams, type FakeUpstreams } from '../helpers/fake-upstreams.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

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

describe('gateway.config.example.yaml under its budgets', () => {
  it('prices every model a plan with spend budgets may use: config check has nothing to warn about', () => {
    expect(example.plans.find((p) => p.id === example.defaultPlan)!.daily_budget_usd).toBeDefined();
    expect(example.budgetUnpricedModels).toBe('refuse');
    expect([...unpricedUnderBudget(example)]).toEqual([]);
    expect(configWarnings(example).filter((w) => w.includes('budget'))).toEqual([]);
    // The warning itself, had a model no price: it names the plan and the model.
    const unpriced = { ...example, models: example.models.map((m) => (m.id === 'claude-haiku-4-5' ? { ...m, pricing: undefined } : m)) };
    expect(configWarnings(unpriced)).toContainEqual(expect.stringMatching(/^plan free has spend budgets and budget_unpriced_models is refuse, but model claude-haiku-4-5 has no price in the config: their requests on this plan are refused \(403 model_price_unknown\)/));
  });

  describe('the README\'s first examples, offline, with the example as shipped', () => {
    let fake: FakeUpstreams;
    let gw: TestGateway;
    let key: string;
    beforeAll(async () => {
      fake = await startFakeUpstreams();
      // Only the providers' addresses change: models, prices, plans and budgets are the example's.
      const config = read('gateway.config.example.yaml')
        .replace('https://api.openai.com/v1', `${fake.url}/v1`)
        .replace('https://api.anthropic.com/v1', `${fake.url}/v1`)
        .replace('https://generativelanguage.googleapis.com/v1beta', `${fake.url}/v1beta`);
      gw = await startTestGateway({ config, env: { OPENAI_API_KEY: 'sk-test', ANTHROPIC_API_KEY: 'sk-ant-test', GEMINI_API_KEY: 'gemini-test' } });
      key = await gw.newKey();
    });
    afterAll(async () => {
      await gw?.close();
      await fake?.close();
    });

    const models = exampleModels(read('README.md'), '## Text generation');
    it.each(models)('%s answers a new user on the free plan (with its budgets) through chat completions and Messages', async (model) => {
      const chat = await gw.fetch('/v1/chat/completions', { method: 'POST', key, json: { model, messages: [{ role: 'user', content: 'Hello' }] } });
      expect(chat.status, await chat.clone().text()).toBe(200);
      const messages = await gw.fetch('/v1/messages', { method: 'POST', key, json: { model, max_tokens: 256, messages: [{ role: 'user', content: 'Hello' }] } });
      expect(messages.status, await messages.clone().text()).toBe(200);
    });

    it('and each request has a cost, counted against the budgets', async () => {
      const usage = (await (await gw.fetch('/v1/usage', { key })).json()) as { totals: { cost: string | null } };
      expect(Number(usage.totals.cost)).toBeGreaterThan(0);
    });
  });
});
