// Golden usage: every upstream (OpenAI chat, OpenAI Responses for OpenAI models asked in the
// Responses format, OpenAI-compatible as OpenRouter, Anthropic, Gemini) × every client format ×
// stream or not, each upstream answering a recorded answer whose usage has cache reads, cache
// writes and reasoning (test/helpers/usage-upstreams.ts). Asserted exactly: the usage object the
// client receives, the ledger row's token columns and the quota charged. One row per upstream
// and one usage per (client, upstream): a new ledger column (cost, …) is one more field in LEDGER.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quotaOf, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import {
  ANTHROPIC_DELTA_USAGE,
  ANTHROPIC_START_USAGE,
  ANTHROPIC_USAGE,
  GEMINI_USAGE,
  OPENAI_USAGE,
  OPENROUTER_USAGE,
  RESPONSES_USAGE,
  startUsageUpstreams,
  usageConfig,
  type UsageUpstreams,
} from '../helpers/usage-upstreams.ts';

const UPSTREAMS = ['openai', 'compat', 'anthropic', 'gemini'] as const;
type Upstream = (typeof UPSTREAMS)[number];
const CLIENTS = ['chat', 'messages', 'responses', 'generateContent'] as const;
type Client = (typeof CLIENTS)[number];

/** The ledger row of an answer from each upstream: the same whatever the client's format or streaming. */
type LedgerRow = { promptTokens: number; completionTokens: number; cachedTokens: number; reasoningTokens: number; cacheWriteTokens: number; cacheWrite1hTokens: number; billedTokens: bigint; cost: string };
const LEDGER: Record<Upstream, LedgerRow> = {
  // OpenAI chat and, for a Responses client, OpenAI Responses: 2006 in (1920 cached), 300 out (256 reasoning).
  // Cost: 86 × 0.00000025 + 1920 × 0.000000025 + 300 × 0.000002 (reasoning at the output price).
  openai: { promptTokens: 2006, completionTokens: 300, cachedTokens: 1920, reasoningTokens: 256, cacheWriteTokens: 0, cacheWrite1hTokens: 0, billedTokens: 2306n, cost: '0.0006695' },
  // OpenRouter: 2226 in (1920 read, 300 written), 300 out (256 reasoning).
  // Cost: 6 × 0.000003 + 1920 × 0.0000003 + 300 × 0.00000375 + 300 × 0.000015.
  compat: { promptTokens: 2226, completionTokens: 300, cachedTokens: 1920, reasoningTokens: 256, cacheWriteTokens: 300, cacheWrite1hTokens: 0, billedTokens: 2526n, cost: '0.006219' },
  // Anthropic: 6 uncached + 1920 read + 300 written (200 of them for an hour), 300 out (256 thinking).
  // Weighted in the quota (1-hour writes weigh what writes do): 6 + 1920 × 0.1 + 300 × 1.25 + 300 = 873.
  // Cost: 6 × 0.000003 + 1920 × 0.0000003 + 100 × 0.00000375 + 200 × 0.000006 + 300 × 0.000015.
  anthropic: { promptTokens: 2226, completionTokens: 300, cachedTokens: 1920, reasoningTokens: 256, cacheWriteTokens: 300, cacheWrite1hTokens: 200, billedTokens: 873n, cost: '0.006669' },
  // Gemini: 2006 in (1920 cached), 44 candidates + 256 thoughts.
  // Cost: 86 × 0.0000003 + 1920 × 0.00000003 + 300 × 0.0000025.
  gemini: { promptTokens: 2006, completionTokens: 300, cachedTokens: 1920, reasoningTokens: 256, cacheWriteTokens: 0, cacheWrite1hTokens: 0, billedTokens: 2306n, cost: '0.0008334' },
};

/** What a chat client sees of a Claude answer (Anthropic's, or OpenRouter's translated for the other formats). */
const CHAT_OF_CLAUDE = {
  prompt_tokens: 2226,
  completion_tokens: 300,
  total_tokens: 2526,
  prompt_tokens_details: { cached_tokens: 1920, cache_write_tokens: 300 },
  completion_tokens_details: { reasoning_tokens: 256 },
};
/** What a Messages client sees of an answer without cache writes: the uncached rest of 2006 − 1920. */
const MESSAGES_OF_2006 = { input_tokens: 86, output_tokens: 300, cache_creation_input_tokens: 0, cache_read_input_tokens: 1920, output_tokens_details: { thinking_tokens: 256 } };
const RESPONSES_OF_CLAUDE = { input_tokens: 2226, input_tokens_details: { cached_tokens: 1920, cache_write_tokens: 300 }, output_tokens: 300, output_tokens_details: { reasoning_tokens: 256 }, total_tokens: 2526 };
const GEMINI_OF_CLAUDE = { promptTokenCount: 2226, candidatesTokenCount: 44, totalTokenCount: 2526, cachedContentTokenCount: 1920, thoughtsTokenCount: 256 };

/** The usage object each client format receives; an upstream of the client's own format passes its usage through as written. */
const RECEIVED: Record<Client, Record<Upstream, object>> = {
  chat: {
    openai: OPENAI_USAGE,
    compat: OPENROUTER_USAGE,
    anthropic: CHAT_OF_CLAUDE,
    gemini: { prompt_tokens: 2006, completion_tokens: 300, total_tokens: 2306, prompt_tokens_details: { cached_tokens: 1920 }, completion_tokens_details: { reasoning_tokens: 256 } },
  },
  messages: {
    openai: MESSAGES_OF_2006,
    // OpenRouter does not split its writes by lifetime: all of them are 5-minute ones.
    compat: {
      input_tokens: 6,
      output_tokens: 300,
      cache_creation_input_tokens: 300,
      cache_read_input_tokens: 1920,
      cache_creation: { ephemeral_5m_input_tokens: 300, ephemeral_1h_input_tokens: 0 },
      output_tokens_details: { thinking_tokens: 256 },
    },
    anthropic: ANTHROPIC_USAGE,
    gemini: MESSAGES_OF_2006,
  },
  responses: {
    openai: RESPONSES_USAGE,
    compat: RESPONSES_OF_CLAUDE,
    anthropic: RESPONSES_OF_CLAUDE,
    gemini: { input_tokens: 2006, input_tokens_details: { cached_tokens: 1920, cache_write_tokens: 0 }, output_tokens: 300, output_tokens_details: { reasoning_tokens: 256 }, total_tokens: 2306 },
  },
  generateContent: {
    openai: { promptTokenCount: 2006, candidatesTokenCount: 44, totalTokenCount: 2306, cachedContentTokenCount: 1920, thoughtsTokenCount: 256 },
    compat: GEMINI_OF_CLAUDE,
    anthropic: GEMINI_OF_CLAUDE,
    gemini: GEMINI_USAGE,
  },
};

/**
 * A Messages stream reports usage twice: message_start (the input side) and message_delta (all of
 * it). Translated, the input is not known at the start; passed through, both are Anthropic's.
 */
const messagesStream = (upstream: Upstream) =>
  upstream === 'anthropic' ? { start: ANTHROPIC_START_USAGE, delta: ANTHROPIC_DELTA_USAGE } : { start: { input_tokens: 0, output_tokens: 0 }, delta: RECEIVED.messages[upstream] };

const expectedUsage = (client: Client, upstream: Upstream, stream: boolean) => (client === 'messages' && stream ? messagesStream(upstream) : RECEIVED[client][upstream]);

let fake: UsageUpstreams;
let gw: TestGateway;
beforeAll(async () => {
  fake = await startUsageUpstreams();
  gw = await startTestGateway({ config: usageConfig(fake.url) });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

type Json = Record<string, any>;

/** The JSON payloads of a server-sent-events body (`data:` lines; CRLF or LF framed). */
const ssePayloads = (body: string): Json[] =>
  body
    .split(/\r?\n\r?\n/)
    .flatMap((frame) => frame.split(/\r?\n/).filter((l) => l.startsWith('data: ')))
    .map((l) => l.slice('data: '.length))
    .filter((d) => d !== '[DONE]')
    .map((d) => JSON.parse(d));

/** Sends one request in the client's format and returns the usage it received and its request id. */
async function call(client: Client, model: string, stream: boolean, key: string): Promise<{ usage: unknown; requestId: string }> {
  const post = (path: string, json: object, headers: Record<string, string> = {}) => gw.fetch(path, { method: 'POST', key, json, headers });
  let res: Response;
  switch (client) {
    case 'chat':
      res = await post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'Hi' }], ...(stream ? { stream, stream_options: { include_usage: true } } : {}) });
      break;
    case 'messages':
      res = await post('/v1/messages', { model, max_tokens: 1024, messages: [{ role: 'user', content: 'Hi' }], stream }, { 'anthropic-version': '2023-06-01' });
      break;
    case 'responses':
      res = await post('/v1/responses', { model, input: 'Hi', stream });
      break;
    case 'generateContent':
      res = await gw.fetch(`/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`, {
        method: 'POST',
        json: { contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] },
        headers: { 'x-goog-api-key': key },
      });
      break;
  }
  expect(res.status).toBe(200);
  const requestId = res.headers.get('x-request-id')!;
  if (!stream) {
    const body = (await res.json()) as Json;
    return { usage: client === 'generateContent' ? body.usageMetadata : body.usage, requestId };
  }
  const events = ssePayloads(await res.text());
  switch (client) {
    case 'chat':
      return { usage: events.find((e) => e.usage)!.usage, requestId };
    case 'messages':
      return { usage: { start: events.find((e) => e.type === 'message_start')!.message.usage, delta: events.find((e) => e.type === 'message_delta')!.usage }, requestId };
    case 'responses':
      return { usage: events.find((e) => e.type === 'response.completed')!.response.usage, requestId };
    case 'generateContent':
      return { usage: events[events.length - 1]!.usageMetadata, requestId };
  }
}

/** Polls until `read` gives a value `done` accepts (settlement is written after the answer), or 5 s pass. */
async function settled<T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const v = await read();
    if (done(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function ledgerRow(requestId: string) {
  return settled(
    async () => {
      await gw.services.ledger.flush();
      const row = await gw.services.db.prisma.usageRecord.findFirst({ where: { requestId } });
      // The cost as the decimal string it was written as (Prisma reads numeric as a Decimal).
      return row && { ...row, cost: row.cost?.toFixed() ?? null };
    },
    (row) => row !== null,
  );
}

const CASES = CLIENTS.flatMap((client) => UPSTREAMS.flatMap((upstream) => [false, true].map((stream) => ({ client, upstream, stream }))));

describe('usage, from each upstream to each client format, to the ledger and the quota', () => {
  it.each(CASES)('$client ← $upstream, stream $stream', async ({ client, upstream, stream }) => {
    // A key of its own: its quota counter holds this request alone.
    const key = await gw.newKey();
    const { usage, requestId } = await call(client, `${upstream}-usage`, stream, key);
    expect(usage).toEqual(expectedUsage(client, upstream, stream));

    const row = await ledgerRow(requestId);
    expect(row).toMatchObject({ ...LEDGER[upstream], usageSource: 'reported', status: 200, provider: upstream, upstreamModel: `${upstream}-model` });
    // The OpenAI model asked in the Responses format went to OpenAI's Responses API.
    const sent = fake.requests[fake.requests.length - 1]!;
    if (upstream === 'openai') expect(sent.path).toBe(client === 'responses' ? '/v1/responses' : '/v1/chat/completions');

    const billed = Number(LEDGER[upstream].billedTokens);
    expect(await settled(() => quotaOf(gw, key), (q) => q.settled === billed && q.reserved === 0)).toEqual({ settled: billed, reserved: 0 });
  });
});
