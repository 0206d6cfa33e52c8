// Items the gateway generated for translated Responses answers, sent back as `item_reference` (the
// AI SDK does so by default): on two instances sharing PostgreSQL and Redis, the follow-up may reach
// the instance that did not answer. The item store, in memory and in Redis, below that.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomToken } from '../../server/runtime/secrets.ts';
import { MemoryItemStore, RedisItemStore } from '../../server/stores/items.ts';
import { CounterStoreUnavailableError, openCounterStore } from '../../server/stores/index.ts';
import { RedisCounterStore } from '../../server/stores/redis.ts';
import { startFakeUpstreams, type FakeUpstreams } from '../helpers/fake-upstreams.ts';
import { TEST_REDIS_URL, freshPostgres, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { textConfig } from '../helpers/text-gateway.ts';

const weather = { type: 'function' as const, name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] }, strict: false };

describe('two instances, one PostgreSQL and one Redis', () => {
  let fake: FakeUpstreams;
  let pg: Awaited<ReturnType<typeof freshPostgres>>;
  let a: TestGateway;
  let b: TestGateway;
  let alone: TestGateway;
  let key: string;
  const client = (gw: TestGateway) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });

  beforeAll(async () => {
    fake = await startFakeUpstreams();
    pg = await freshPostgres();
    const shared = { DATABASE_URL: pg.url, REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: `mgtest:${randomToken(6)}:` };
    a = await startTestGateway({ config: textConfig(fake.url), env: shared });
    b = await startTestGateway({ config: textConfig(fake.url), env: shared });
    // The same database without the shared Redis: what every instance was before the store moved there.
    alone = await startTestGateway({ config: textConfig(fake.url), env: { DATABASE_URL: pg.url } });
    key = await a.newKey();
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close(), alone?.close()]);
    await Promise.all([fake?.close(), pg?.drop()]);
  });

  describe.each(['anthropic', 'gemini'])('%s model', (p) => {
    it.each([false, true])('stream %s: the answer from A, the follow-up with item references on B', async (stream) => {
      const first: OpenAI.Responses.Response = stream
        ? await client(a).responses.stream({ model: `${p}-text`, input: 'Weather in Paris?', tools: [weather] }).finalResponse()
        : await client(a).responses.create({ model: `${p}-text`, input: 'Weather in Paris?', tools: [weather] });
      const call = first.output.find((i): i is OpenAI.Responses.ResponseFunctionToolCall => i.type === 'function_call')!;
      expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', id: expect.stringMatching(/^fc_[0-9A-Za-z]{40}$/) });
      const input: OpenAI.Responses.ResponseInputItem[] = [
        { role: 'user', content: 'Weather in Paris?' },
        ...first.output.map((i) => ({ type: 'item_reference' as const, id: i.id! })),
        { type: 'function_call_output', call_id: call.call_id, output: '{"temp":21}' },
      ];
      const second = await client(b).responses.create({ model: `${p}-text`, tools: [weather], input });
      expect(second.output_text).toContain('21');
      // The upstream got the referenced items back in its own form (Gemini's call with the thought
      // signature its reasoning item carried), between the question and the result.
      const sent = fake.requests.at(-1)!.body as Record<string, unknown>;
      if (p === 'anthropic') {
        expect(sent.messages).toEqual([
          { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
          { role: 'assistant', content: [{ type: 'tool_use', id: call.call_id, name: 'get_weather', input: { location: 'Paris', unit: 'celsius' } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.call_id, content: [{ type: 'text', text: '{"temp":21}' }] }] },
        ]);
      } else {
        expect(sent.contents).toEqual([
          { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
          { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { location: 'Paris', unit: 'celsius' } }, thoughtSignature: 'EqUCCqICAb4+fakeSignature==' }] },
          { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp: 21 } } }] },
        ]);
      }

      // An instance that does not share the store cannot know them: a 400 that says so (not a silent drop).
      const refused = await client(alone).responses.create({ model: `${p}-text`, tools: [weather], input }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
      expect((refused as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ param: 'input[1].id' });
      expect((refused as Error).message).toContain('is not an item this gateway generated recently');
    });
  });
});

describe('item stores', () => {
  const item = (id: string) => ({ id, type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{"x":1}' });

  it('in memory: kept by id for the time to live, the oldest making room, items without an id ignored', async () => {
    let now = 1_000;
    const store = new MemoryItemStore(2, 500, () => now);
    store.remember([item('fc_1'), { type: 'message' }, item('fc_2')]);
    expect([...(await store.lookup(['fc_1', 'fc_2', 'fc_3'])).keys()]).toEqual(['fc_1', 'fc_2']);
    store.remember([item('fc_3')]);
    expect([...(await store.lookup(['fc_1', 'fc_2', 'fc_3'])).keys()]).toEqual(['fc_2', 'fc_3']);
    now += 500;
    expect((await store.lookup(['fc_3'])).size).toBe(1);
    now += 1;
    expect((await store.lookup(['fc_3'])).size).toBe(0);
  });

  it('in Redis: shared by every connection, expiring there, under the counters prefix', async () => {
    const prefix = `mgtest:${randomToken(6)}:`;
    const one = openCounterStore(TEST_REDIS_URL, prefix) as RedisCounterStore;
    const two = openCounterStore(TEST_REDIS_URL, prefix) as RedisCounterStore;
    try {
      await Promise.all([one.ready(5_000), two.ready(5_000)]);
      const errors: unknown[] = [];
      new RedisItemStore(one, (e) => errors.push(e), 300).remember([item('fc_a'), { type: 'message' }, item('fc_b')]);
      const reader = new RedisItemStore(two, (e) => errors.push(e), 300);
      const found = await reader.lookup(['fc_a', 'fc_b', 'fc_c']);
      expect(Object.fromEntries(found)).toEqual({ fc_a: item('fc_a'), fc_b: item('fc_b') });
      expect(await two.redis.pttl(`${prefix}item:fc_a`)).toBeGreaterThan(0);
      await new Promise((r) => setTimeout(r, 400));
      expect((await reader.lookup(['fc_a', 'fc_b'])).size).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });

  it('in Redis, unreachable: a lookup fails as the counter store does (503), a write is reported, nothing waits', async () => {
    const store = openCounterStore('redis://127.0.0.1:1', 'mgtest:', { commandMs: 200, connectMs: 200, reconnectMaxMs: 1_000 }) as RedisCounterStore;
    try {
      const errors: unknown[] = [];
      const items = new RedisItemStore(store, (e) => errors.push(e));
      items.remember([item('fc_x')]);
      const err = await items.lookup(['fc_x']).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CounterStoreUnavailableError);
      await new Promise((r) => setTimeout(r, 50));
      expect(errors).toHaveLength(1);
    } finally {
      await store.close();
    }
  });
});
