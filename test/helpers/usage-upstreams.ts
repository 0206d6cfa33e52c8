// A fake of every text upstream whose answers carry the usage a bill is made of: cache reads, cache
// writes (Anthropic's split by lifetime, OpenRouter's), reasoning. Each answer is a recorded one
// (test/fixtures/recorded/upstreams/, the files named below) with only its usage replaced, in the
// shape that provider reports it (recorded too: OpenAI's prompt-cache details, Anthropic's
// message_start/message_delta split, Gemini's Vertex implicit-caching usage, OpenRouter's usage
// chunk with a choice in it). The upstream model name picks the vendor on the shared chat route.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type * as AnthropicWire from '../../server/providers/anthropic/wire.ts';
import type * as GeminiWire from '../../server/providers/gemini/wire.ts';
import type * as OpenAIWire from '../../server/providers/openai/wire.ts';
import type { JsonObject } from '../../server/upstream/json.ts';

const VERCEL = new URL('../fixtures/recorded/upstreams/vercel+ai/packages/', import.meta.url);
const text = (p: string) => readFileSync(new URL(p, VERCEL), 'utf8');
const json = (p: string): JsonObject => JSON.parse(text(p));
const lines = (p: string): JsonObject[] =>
  text(p)
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));

// ---- the usage each upstream reports --------------------------------------------------------------

/** OpenAI chat (openai-text.json's shape): 2006 prompt tokens of which 1920 cached; 300 out of which 256 reasoning. */
export const OPENAI_USAGE = {
  prompt_tokens: 2006,
  completion_tokens: 300,
  total_tokens: 2306,
  prompt_tokens_details: { cached_tokens: 1920, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 256, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
} satisfies OpenAIWire.ChatUsage;

/** OpenRouter serving a Claude model (its ChatUsage): 2226 prompt tokens, 1920 read from the cache and 300 written. */
export const OPENROUTER_USAGE = {
  prompt_tokens: 2226,
  completion_tokens: 300,
  total_tokens: 2526,
  prompt_tokens_details: { cached_tokens: 1920, cache_write_tokens: 300, audio_tokens: 0, video_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 256, image_tokens: 0 },
  cost: 0.0019935,
  is_byok: false,
  cost_details: { upstream_inference_cost: null, upstream_inference_prompt_cost: 0.0014835, upstream_inference_completions_cost: 0.00045 },
};

/** OpenAI Responses (programmatic-tool-calling.1.json's shape, with cache_write_tokens). */
export const RESPONSES_USAGE = {
  input_tokens: 2006,
  input_tokens_details: { cache_write_tokens: 0, cached_tokens: 1920 },
  output_tokens: 300,
  output_tokens_details: { reasoning_tokens: 256 },
  total_tokens: 2306,
} satisfies OpenAIWire.ResponsesUsage;

/** Anthropic's answer: 6 uncached + 1920 read + 300 written (100 for 5 minutes, 200 for an hour); 300 out of which 256 thinking. */
export const ANTHROPIC_USAGE = {
  input_tokens: 6,
  cache_creation_input_tokens: 300,
  cache_read_input_tokens: 1920,
  cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 200 },
  output_tokens: 300,
  output_tokens_details: { thinking_tokens: 256 },
  service_tier: 'standard',
  inference_geo: 'global',
};

/** Its stream's message_start (the input side, output 1) and message_delta (cumulative, without the split: the recorded prompt-cache stream's shape). */
export const ANTHROPIC_START_USAGE = {
  input_tokens: 6,
  cache_creation_input_tokens: 300,
  cache_read_input_tokens: 1920,
  cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 200 },
  output_tokens: 1,
  service_tier: 'standard',
  inference_geo: 'global',
};
export const ANTHROPIC_DELTA_USAGE = {
  input_tokens: 6,
  cache_creation_input_tokens: 300,
  cache_read_input_tokens: 1920,
  output_tokens: 300,
  output_tokens_details: { thinking_tokens: 256 },
} satisfies AnthropicWire.Usage;

/** Gemini (the Vertex implicit-caching recording's shape): 2006 prompt tokens of which 1920 cached; 44 candidates + 256 thoughts. */
export const GEMINI_USAGE = {
  promptTokenCount: 2006,
  candidatesTokenCount: 44,
  totalTokenCount: 2306,
  cachedContentTokenCount: 1920,
  promptTokensDetails: [{ modality: 'TEXT', tokenCount: 2006 }],
  cacheTokensDetails: [{ modality: 'TEXT', tokenCount: 1920 }],
  thoughtsTokenCount: 256,
} satisfies GeminiWire.UsageMetadata;

// ---- the recorded answers, usage replaced ----------------------------------------------------------

const CHAT = 'openai/src/chat/__fixtures__/openai-text';
const RESPONSES = 'openai/src/responses/__fixtures__/openai-reasoning-encrypted-content.1';
const ANTHROPIC = 'anthropic/src/__fixtures__/anthropic-clear-thinking.1';
const GEMINI = 'google/src/__fixtures__/google-reasoning';

const openaiJson = () => ({ ...json(`${CHAT}.json`), usage: OPENAI_USAGE });
/** The recorded stream; its last chunk (`choices: []`) is the usage chunk. */
const openaiChunks = () => lines(`${CHAT}.chunks.txt`).map((c) => (c.usage ? { ...c, usage: OPENAI_USAGE } : c));

const openRouterJson = () => ({ ...json(`${CHAT}.json`), id: 'gen-1770933883-FakeOpenRouter', provider: 'Anthropic', usage: OPENROUTER_USAGE });
/** OpenRouter's usage rides on a last chunk with one empty choice, not `choices: []` (OpenRouter's streaming usage, as its SDK's recordings show). */
function openRouterChunks(): JsonObject[] {
  const chunks = lines(`${CHAT}.chunks.txt`).filter((c) => !c.usage);
  const last = chunks[chunks.length - 1]!;
  return [...chunks, { ...last, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null, native_finish_reason: null, logprobs: null }], usage: OPENROUTER_USAGE }];
}

const responsesJson = () => ({ ...json(`${RESPONSES}.json`), usage: RESPONSES_USAGE });
/** The recording's first stream (it holds four back to back), its final response's usage replaced. */
function responsesEvents(): JsonObject[] {
  const all = lines(`${RESPONSES}.chunks.txt`);
  const end = all.findIndex((e) => e.type === 'response.completed');
  return all.slice(0, end + 1).map((e) => (e.type === 'response.completed' ? { ...e, response: { ...(e.response as JsonObject), usage: RESPONSES_USAGE } } : e));
}

const anthropicJson = () => ({ ...json(`${ANTHROPIC}.json`), usage: ANTHROPIC_USAGE });
function anthropicEvents(): JsonObject[] {
  return lines(`${ANTHROPIC}.chunks.txt`).map((e) => {
    if (e.type === 'message_start') return { ...e, message: { ...(e.message as JsonObject), usage: ANTHROPIC_START_USAGE } };
    if (e.type === 'message_delta') return { ...e, usage: ANTHROPIC_DELTA_USAGE };
    return e;
  });
}

const geminiJson = () => ({ ...json(`${GEMINI}.json`), usageMetadata: GEMINI_USAGE });
/** Running usage on every chunk: the candidates counted so far, the last chunk's the whole. */
function geminiChunks(): JsonObject[] {
  const chunks = lines(`${GEMINI}.chunks.txt`);
  return chunks.map((c, i) => {
    if (i === chunks.length - 1) return { ...c, usageMetadata: GEMINI_USAGE };
    const candidates = Math.min(GEMINI_USAGE.candidatesTokenCount, 10 * (i + 1));
    return { ...c, usageMetadata: { ...GEMINI_USAGE, candidatesTokenCount: candidates, totalTokenCount: 2006 + candidates + 256 } };
  });
}

// ---- the server -------------------------------------------------------------------------------------

export type UsageRequest = { path: string; headers: IncomingMessage['headers']; body: JsonObject };
export type UsageUpstreams = { url: string; requests: UsageRequest[]; close(): Promise<void> };

function send(res: ServerResponse, body: object) {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function stream(res: ServerResponse, frames: string[]) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const f of frames) res.write(f);
  res.end();
}

const dataFrame = (e: object) => `data: ${JSON.stringify(e)}\n\n`;
const eventFrame = (e: JsonObject) => `event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`;

function answer(path: string, body: JsonObject, res: ServerResponse) {
  const streamed = body.stream === true;
  if (path.endsWith('/chat/completions')) {
    const openRouter = body.model === 'compat-model';
    if (!streamed) return send(res, openRouter ? openRouterJson() : openaiJson());
    const chunks = openRouter ? openRouterChunks() : openaiChunks();
    return stream(res, [...(openRouter ? [': OPENROUTER PROCESSING\n\n'] : []), ...chunks.map(dataFrame), 'data: [DONE]\n\n']);
  }
  if (path.endsWith('/responses')) return streamed ? stream(res, responsesEvents().map(eventFrame)) : send(res, responsesJson());
  if (path.endsWith('/messages')) return streamed ? stream(res, anthropicEvents().map(eventFrame)) : send(res, anthropicJson());
  const gemini = /:(generateContent|streamGenerateContent)/.exec(path);
  if (gemini) return gemini[1] === 'generateContent' ? send(res, geminiJson()) : stream(res, geminiChunks().map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`));
  res.writeHead(404, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message: `no route ${path}` } }));
}

export async function startUsageUpstreams(): Promise<UsageUpstreams> {
  const requests: UsageRequest[] = [];
  const server = createServer((req, res) => void (async () => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body: JsonObject = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
    const path = req.url ?? '/';
    requests.push({ path, headers: req.headers, body });
    answer(path, body, res);
  })());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** The config of a gateway with one model per upstream, `<upstream>-usage`, reaching this fake. */
export const usageConfig = (fake: string) => `
providers:
  - { id: openai, type: openai, base_url: "${fake}/v1", api_key: sk-openai }
  - { id: compat, type: openai-compatible, base_url: "${fake}/v1", api_key: sk-compat }
  - { id: anthropic, type: anthropic, base_url: "${fake}/v1", api_key: sk-ant }
  - { id: gemini, type: gemini, base_url: "${fake}/v1beta", api_key: gemini-key }
models:
  # List prices of the providers' models of this shape (US dollars per token); the Claude model
  # also weighs cache reads and writes in the quota as Anthropic prices them.
  - id: openai-usage
    endpoint: chat
    upstreams: [{ provider: openai, model: openai-model }]
    pricing: { prompt: "0.00000025", input_cache_read: "0.000000025", completion: "0.000002" }
  - id: compat-usage
    endpoint: chat
    upstreams: [{ provider: compat, model: compat-model }]
    pricing: { prompt: "0.000003", input_cache_read: "0.0000003", input_cache_write: "0.00000375", completion: "0.000015" }
  - id: anthropic-usage
    endpoint: chat
    upstreams: [{ provider: anthropic, model: anthropic-model }]
    pricing: { prompt: "0.000003", input_cache_read: "0.0000003", input_cache_write: "0.00000375", input_cache_write_1h: "0.000006", completion: "0.000015" }
    billing: { weights: { cache_read: 0.1, cache_write: 1.25 } }
  - id: gemini-usage
    endpoint: chat
    upstreams: [{ provider: gemini, model: gemini-model }]
    pricing: { prompt: "0.0000003", input_cache_read: "0.00000003", completion: "0.0000025" }
plans:
  - { id: free, rank: 0, daily_tokens: 10000000, requests_per_minute: 10000 }
key_cache_ttl_ms: 500
`;
