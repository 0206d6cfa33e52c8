// The walk-through of docs/architecture.md "Adding a concern", done: a header every answer carries
// is one module (the concern below) and one line where the pipeline is assembled (here the test's
// `concerns`, which pipeline/concerns.ts appends to its own list). No capability is edited, and the
// header comes back from every capability, streamed or whole, answered or refused.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Concern, Stage } from '../../server/pipeline/concern.ts';
import { startFakeUpstreams, type FakeUpstreams } from '../helpers/fake-upstreams.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { textConfig } from '../helpers/text-gateway.ts';

// ---- the module: server/pipeline/served-by.ts, as an operator would write it ----
/** Names the instance that served a call, on every answer: an answer's or an error's. */
const servedBy = (instance: string): Concern => ({
  name: 'served-by',
  request: {
    start(facts) {
      facts.headers['x-served-by'] = instance;
    },
  },
});
// ---- end of the module ----

/** A second concern that watches every stage, to show the order they run in. */
const seen: { stage: Stage; at: 'start' | 'close'; what: string }[] = [];
const watch = (stage: Stage, what: (facts: never) => string) => ({
  start: (facts: never) => void seen.push({ stage, at: 'start', what: what(facts) }),
  close: (facts: never) => void seen.push({ stage, at: 'close', what: what(facts) }),
});
const watcher: Concern = {
  name: 'stage-watcher',
  request: watch('request', (f: { route: string }) => f.route),
  admit: watch('admit', (f: { model: string }) => f.model),
  plan: watch('plan', (f: { model: string }) => f.model),
  attempt: watch('attempt', (f: { provider: string }) => f.provider),
  settle: watch('settle', (f: { status: number }) => String(f.status)),
};

let fake: FakeUpstreams;
let gw: TestGateway;
let key: string;
let oa: OpenAI;
beforeAll(async () => {
  fake = await startFakeUpstreams();
  // The one line: the concern added where the pipeline is assembled.
  gw = await startTestGateway({ config: textConfig(fake.url), concerns: [servedBy('gw-1'), watcher] });
  key = await gw.newKey();
  oa = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

describe('adding a concern: one module, one line', () => {
  it('chat completions, whole and streamed, through the openai SDK', async () => {
    const whole = await oa.chat.completions.create({ model: 'openai-text', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(whole.response.headers.get('x-served-by')).toBe('gw-1');
    const streamed = await oa.chat.completions.create({ model: 'gemini-text', stream: true, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    for await (const _ of streamed.data);
    expect(streamed.response.headers.get('x-served-by')).toBe('gw-1');
  });

  it('Messages through the Anthropic SDK, and its token count', async () => {
    const an = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });
    const msg = await an.messages.create({ model: 'claude-opus-4-7', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(msg.response.headers.get('x-served-by')).toBe('gw-1');
    const count = await an.messages.countTokens({ model: 'claude-opus-4-7', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(count.response.headers.get('x-served-by')).toBe('gw-1');
  });

  it('embeddings and moderation', async () => {
    const e = await oa.embeddings.create({ model: 'embed-model', input: 'hello' }).withResponse();
    expect(e.response.headers.get('x-served-by')).toBe('gw-1');
    const m = await oa.moderations.create({ input: 'hello' }).withResponse();
    expect(m.response.headers.get('x-served-by')).toBe('gw-1');
  });

  it('an error carries it too: a model the catalog does not serve, an upstream that refuses', async () => {
    for (const model of ['no-such-model', 'openai-fail400']) {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.headers.get('x-served-by')).toBe('gw-1');
    }
  });

  it('the stages run in order: request, admit, plan, attempt (each failover step), settle', async () => {
    seen.length = 0;
    await oa.embeddings.create({ model: 'compat-embed', input: 'hello' });
    // compat-embed's first upstream answers 500: failover tries it, then the next.
    expect(seen.map((s) => `${s.stage}.${s.at} ${s.what}`)).toEqual([
      'request.start embeddings',
      'admit.start compat-embed',
      'admit.close compat-embed',
      'plan.start compat-embed',
      'plan.close compat-embed',
      ...['openai', 'openai', 'compat'].flatMap((p) => [`attempt.start ${p}`, `attempt.close ${p}`]),
      'settle.start 200',
      'settle.close 200',
      'request.close embeddings',
    ]);
  });
});
