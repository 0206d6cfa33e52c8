// One local HTTP server that speaks the OpenAI chat, Anthropic Messages and Gemini wire formats.
// Plain text answers replay recorded provider bodies from test/fixtures/recorded; tool calls, JSON output,
// reasoning and failures are scripted in the same byte-level shapes as those recordings: OpenAI's
// `choices: []` usage chunk and [DONE], Anthropic `event:` lines with pings and padded JSON,
// Gemini's CRLF-framed alt=sse events. The upstream model name selects the behaviour.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

type Json = Record<string, any>;
const fixtures = new URL('../fixtures/recorded/vercel-ai/', import.meta.url);
const fixture = (p: string) => readFileSync(new URL(p, fixtures), 'utf8');
const lines = (p: string) => fixture(p).split('\n').filter((l) => l.trim());

export type Recorded = { path: string; headers: IncomingMessage['headers']; body: Json };

type Script = {
  /** Anthropic native web search: a server_tool_use, its results and a cited answer. */
  serverSearch?: boolean;
  text?: string;
  reasoning?: { text: string; signature: string };
  toolCall?: { id: string; name: string; args: Json };
  finish: 'stop' | 'tool' | 'length';
  usage: { input: number; output: number; cached?: number; reasoning?: number };
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the fake answers, decided from the request as a real model would. */
function decide(model: string, tools: string[], toolResult: string | null, wantsJson: boolean, maxTokens?: number, request: Json = {}): Script | 'fixture' {
  // Uses exactly what the gateway reserves for a 40-character prompt: 10 in, max_tokens out.
  if (model.includes('exact')) return { text: 'ok', finish: 'stop', usage: { input: 10, output: maxTokens ?? 0 } };
  if (toolResult !== null && tools.includes('web_search')) return { text: 'Paris is sunny today [1].', finish: 'stop', usage: { input: 60, output: 7 } };
  if (toolResult !== null) return { text: `The tool said: ${toolResult}`, finish: 'stop', usage: { input: 50, output: 8 } };
  // A coding agent's first step: read the README named in the conversation (Claude Code's Read
  // tool, Gemini CLI's read_file).
  const reader = tools.find((t) => t === 'Read' || t === 'read_file');
  if (model.includes('agentic') && reader) {
    const file_path = /\/[\w./-]+\/README\.md/.exec(JSON.stringify(request))?.[0] ?? '/workspace/proj/README.md';
    return { toolCall: { id: 'call_read_1', name: reader, args: { file_path } }, finish: 'tool', usage: { input: 40, output: 12 } };
  }
  if (tools[0] === 'web_search') return { toolCall: { id: 'call_search_1', name: 'web_search', args: { query: 'weather Paris' } }, finish: 'tool', usage: { input: 40, output: 6 } };
  if (tools.length) return { toolCall: { id: 'call_fake_1', name: tools[0]!, args: { location: 'Paris', unit: 'celsius' } }, finish: 'tool', usage: { input: 40, output: 12 } };
  if (wantsJson) return { text: JSON.stringify(model.includes('badjson') ? { wrong: true } : { answer: '42', confidence: 0.9 }), finish: 'stop', usage: { input: 30, output: 9 } };
  if (model.includes('reasoning')) {
    return { reasoning: { text: 'Let me think about it step by step.', signature: 'sig-EqQBCkYIBxgCKkA' }, text: 'The answer is 4.', finish: 'stop', usage: { input: 20, output: 60, reasoning: 45 } };
  }
  if (model.includes('image')) return { text: 'I see an image.', finish: 'stop', usage: { input: 300, output: 5 } };
  return 'fixture';
}

// ---- OpenAI chat ------------------------------------------------------------------------------
/** The last turn that is not a system message (agents add system messages after tool results). */
const lastTurn = (messages: Json[]) => messages.filter((m) => m.role !== 'system').pop();

function openaiToolResult(body: Json): string | null {
  const last = lastTurn(body.messages);
  return last?.role === 'tool' ? String(last.content) : null;
}

function openaiJson(s: Script, model: string): Json {
  const message: Json = { role: 'assistant', content: s.text ?? null, refusal: null, annotations: [] };
  if (s.reasoning) message.reasoning_content = s.reasoning.text;
  if (s.toolCall) message.tool_calls = [{ id: s.toolCall.id, type: 'function', function: { name: s.toolCall.name, arguments: JSON.stringify(s.toolCall.args) } }];
  return {
    id: 'chatcmpl-fake123',
    object: 'chat.completion',
    created: 1770933883,
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: s.finish === 'tool' ? 'tool_calls' : s.finish }],
    usage: openaiUsage(s),
    service_tier: 'default',
    system_fingerprint: 'fp_fake',
  };
}

const openaiUsage = (s: Script) => ({
  prompt_tokens: s.usage.input,
  completion_tokens: s.usage.output,
  total_tokens: s.usage.input + s.usage.output,
  prompt_tokens_details: { cached_tokens: s.usage.cached ?? 0, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: s.usage.reasoning ?? 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
});

function openaiChunks(s: Script, model: string, includeUsage: boolean): string[] {
  const base = { id: 'chatcmpl-fake123', object: 'chat.completion.chunk', created: 1770933892, model, service_tier: 'default', system_fingerprint: 'fp_fake' };
  const chunk = (delta: Json, finish: string | null = null) => JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null, obfuscation: 'x' });
  const out = [s.toolCall && !s.text ? chunk({ role: 'assistant', content: null, refusal: null }) : chunk({ role: 'assistant', content: '', refusal: null })];
  if (s.reasoning) out.push(chunk({ reasoning_content: s.reasoning.text }));
  for (const piece of (s.text ?? '').match(/.{1,7}/gs) ?? []) out.push(chunk({ content: piece }));
  if (s.toolCall) {
    const args = JSON.stringify(s.toolCall.args);
    out.push(chunk({ tool_calls: [{ index: 0, id: s.toolCall.id, type: 'function', function: { name: s.toolCall.name, arguments: '' } }] }));
    for (const piece of args.match(/.{1,9}/gs)!) out.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
  }
  out.push(chunk({}, s.finish === 'tool' ? 'tool_calls' : s.finish));
  if (includeUsage) out.push(JSON.stringify({ ...base, choices: [], usage: openaiUsage(s) }));
  return out;
}

// ---- Anthropic ----------------------------------------------------------------------------------
function anthropicToolResult(body: Json): string | null {
  const last = lastTurn(body.messages);
  const block = Array.isArray(last?.content) ? last.content.find((b: Json) => b.type === 'tool_result') : null;
  if (!block) return null;
  return typeof block.content === 'string' ? block.content : (block.content ?? []).map((c: Json) => c.text ?? '').join('');
}

const SEARCH_HIT = { url: 'https://example.com/paris-weather', title: 'Paris weather' };

function anthropicBlocks(s: Script): Json[] {
  const blocks: Json[] = [];
  if (s.serverSearch) {
    blocks.push({ type: 'server_tool_use', id: 'srvtoolu_01Fake', name: 'web_search', input: { query: 'weather Paris' } });
    blocks.push({ type: 'web_search_tool_result', tool_use_id: 'srvtoolu_01Fake', content: [{ type: 'web_search_result', ...SEARCH_HIT, encrypted_content: 'EqgfCioIARgB', page_age: null }] });
    blocks.push({ type: 'text', text: 'Paris is sunny today.', citations: [{ type: 'web_search_result_location', ...SEARCH_HIT, cited_text: 'Sunny', encrypted_index: 'Eo8BCioIAhgB' }] });
    return blocks;
  }
  if (s.reasoning) blocks.push({ type: 'thinking', thinking: s.reasoning.text, signature: s.reasoning.signature });
  if (s.text !== undefined) blocks.push({ type: 'text', text: s.text });
  if (s.toolCall) blocks.push({ type: 'tool_use', id: 'toolu_01FakeTool', name: s.toolCall.name, input: s.toolCall.args });
  return blocks;
}

const anthropicStop = (s: Script) => (s.finish === 'tool' ? 'tool_use' : s.finish === 'length' ? 'max_tokens' : 'end_turn');

function anthropicJson(s: Script, model: string): Json {
  return {
    model,
    id: 'msg_01FakeMessage',
    type: 'message',
    role: 'assistant',
    content: anthropicBlocks(s),
    stop_reason: anthropicStop(s),
    stop_sequence: null,
    usage: { input_tokens: s.usage.input - (s.usage.cached ?? 0), cache_creation_input_tokens: 0, cache_read_input_tokens: s.usage.cached ?? 0, output_tokens: s.usage.output, service_tier: 'standard' },
  };
}

function anthropicEvents(s: Script, model: string): Json[] {
  const msg = anthropicJson(s, model);
  const out: Json[] = [{ type: 'message_start', message: { ...msg, content: [], stop_reason: null, usage: { ...msg.usage, output_tokens: 1 } } }, { type: 'ping' }];
  anthropicBlocks(s).forEach((b, index) => {
    if (b.type === 'thinking') {
      out.push({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      out.push({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: b.thinking } });
      out.push({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: b.signature } });
    } else if (b.type === 'server_tool_use') {
      out.push({ type: 'content_block_start', index, content_block: { ...b, input: {} } });
      out.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) } });
    } else if (b.type === 'web_search_tool_result') {
      out.push({ type: 'content_block_start', index, content_block: b });
    } else if (b.type === 'text') {
      out.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      for (const piece of b.text.match(/.{1,7}/gs) ?? []) out.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } });
      for (const citation of b.citations ?? []) out.push({ type: 'content_block_delta', index, delta: { type: 'citations_delta', citation } });
    } else {
      out.push({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } });
      out.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: '' } });
      for (const piece of JSON.stringify(b.input).match(/.{1,9}/gs)!) out.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } });
    }
    out.push({ type: 'content_block_stop', index });
  });
  out.push({ type: 'message_delta', delta: { stop_reason: anthropicStop(s), stop_sequence: null }, usage: { output_tokens: s.usage.output } });
  out.push({ type: 'message_stop' });
  return out;
}

// ---- Gemini ---------------------------------------------------------------------------------------
function geminiToolResult(body: Json): string | null {
  const last = body.contents[body.contents.length - 1];
  const part = last?.parts?.find((p: Json) => p.functionResponse);
  return part ? JSON.stringify(part.functionResponse.response) : null;
}

function geminiChunksFor(s: Script, model: string): Json[] {
  const usage = { promptTokenCount: s.usage.input, candidatesTokenCount: s.usage.output - (s.usage.reasoning ?? 0), totalTokenCount: s.usage.input + s.usage.output, thoughtsTokenCount: s.usage.reasoning };
  const base = { modelVersion: model, responseId: 'fakeGeminiResponse' };
  const out: Json[] = [];
  if (s.reasoning) out.push({ ...base, candidates: [{ content: { role: 'model', parts: [{ text: s.reasoning.text, thought: true }] }, index: 0 }], usageMetadata: { promptTokenCount: s.usage.input } });
  if (s.toolCall) out.push({ ...base, candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: s.toolCall.name, args: s.toolCall.args }, thoughtSignature: 'EqUCCqICAb4+fakeSignature==' }] }, index: 0 }], usageMetadata: { promptTokenCount: s.usage.input } });
  for (const piece of (s.text ?? '').match(/.{1,12}/gs) ?? []) out.push({ ...base, candidates: [{ content: { role: 'model', parts: [{ text: piece }] }, index: 0 }], usageMetadata: { promptTokenCount: s.usage.input } });
  out.push({ ...base, candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, finishReason: s.finish === 'length' ? 'MAX_TOKENS' : 'STOP', index: 0 }], usageMetadata: usage });
  return out;
}

function geminiJson(s: Script, model: string): Json {
  const parts: Json[] = [];
  const chunks = geminiChunksFor(s, model);
  for (const c of chunks) for (const p of c.candidates[0].content.parts) if (p.text !== '' || p.functionCall) parts.push(p);
  const merged: Json[] = [];
  for (const p of parts) {
    const prev = merged[merged.length - 1];
    if (prev && typeof p.text === 'string' && typeof prev.text === 'string' && !!p.thought === !!prev.thought) prev.text += p.text;
    else merged.push({ ...p });
  }
  const last = chunks[chunks.length - 1]!;
  return { candidates: [{ content: { role: 'model', parts: merged }, finishReason: last.candidates[0].finishReason, index: 0 }], usageMetadata: last.usageMetadata, modelVersion: model, responseId: 'fakeGeminiResponse' };
}

// ---- OpenAI Responses ----------------------------------------------------------------------------
function responsesToolResult(body: Json): string | null {
  if (!Array.isArray(body.input)) return null;
  const last = body.input[body.input.length - 1];
  return last?.type === 'function_call_output' ? String(last.output) : null;
}

function responsesItems(s: Script, webSearch: boolean): Json[] {
  const items: Json[] = [];
  if (s.reasoning) items.push({ id: 'rs_fake1', type: 'reasoning', summary: [{ type: 'summary_text', text: s.reasoning.text }], encrypted_content: 'gAAAAfakeEncrypted' });
  if (webSearch) items.push({ id: 'ws_fake1', type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'news' } });
  if (s.text !== undefined) {
    const annotations = webSearch ? [{ type: 'url_citation', url: 'https://example.com/news', title: 'News', start_index: 0, end_index: 4 }] : [];
    items.push({ id: 'msg_fake1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: s.text, annotations, logprobs: [] }] });
  }
  if (s.toolCall) items.push({ id: 'fc_fake1', type: 'function_call', status: 'completed', call_id: s.toolCall.id, name: s.toolCall.name, arguments: JSON.stringify(s.toolCall.args) });
  return items;
}

function responsesJson(s: Script, model: string, webSearch: boolean): Json {
  return {
    id: 'resp_fake1', object: 'response', created_at: 1772062769, status: s.finish === 'length' ? 'incomplete' : 'completed', error: null,
    incomplete_details: s.finish === 'length' ? { reason: 'max_output_tokens' } : null, model, output: responsesItems(s, webSearch),
    usage: { input_tokens: s.usage.input, input_tokens_details: { cached_tokens: s.usage.cached ?? 0 }, output_tokens: s.usage.output, output_tokens_details: { reasoning_tokens: s.usage.reasoning ?? 0 }, total_tokens: s.usage.input + s.usage.output },
  };
}

function responsesEvents(s: Script, model: string, webSearch: boolean): Json[] {
  const full = responsesJson(s, model, webSearch);
  const shell = { ...full, status: 'in_progress', output: [], usage: null };
  const out: Json[] = [{ type: 'response.created', response: shell }, { type: 'response.in_progress', response: shell }];
  full.output.forEach((item: Json, output_index: number) => {
    if (item.type === 'message') {
      out.push({ type: 'response.output_item.added', output_index, item: { ...item, status: 'in_progress', content: [] } });
      out.push({ type: 'response.content_part.added', item_id: item.id, output_index, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } });
      const text: string = item.content[0].text;
      for (const delta of text.match(/.{1,7}/gs) ?? []) out.push({ type: 'response.output_text.delta', item_id: item.id, output_index, content_index: 0, delta, logprobs: [] });
      out.push({ type: 'response.output_text.done', item_id: item.id, output_index, content_index: 0, text, logprobs: [] });
      out.push({ type: 'response.content_part.done', item_id: item.id, output_index, content_index: 0, part: item.content[0] });
    } else if (item.type === 'function_call') {
      out.push({ type: 'response.output_item.added', output_index, item: { ...item, status: 'in_progress', arguments: '' } });
      for (const delta of item.arguments.match(/.{1,9}/gs)) out.push({ type: 'response.function_call_arguments.delta', item_id: item.id, output_index, delta });
      out.push({ type: 'response.function_call_arguments.done', item_id: item.id, output_index, arguments: item.arguments });
    } else if (item.type === 'reasoning') {
      out.push({ type: 'response.output_item.added', output_index, item: { ...item, summary: [] } });
      out.push({ type: 'response.reasoning_summary_part.added', item_id: item.id, output_index, summary_index: 0, part: { type: 'summary_text', text: '' } });
      out.push({ type: 'response.reasoning_summary_text.delta', item_id: item.id, output_index, summary_index: 0, delta: item.summary[0].text });
      out.push({ type: 'response.reasoning_summary_text.done', item_id: item.id, output_index, summary_index: 0, text: item.summary[0].text });
      out.push({ type: 'response.reasoning_summary_part.done', item_id: item.id, output_index, summary_index: 0, part: item.summary[0] });
    } else {
      out.push({ type: 'response.output_item.added', output_index, item: { ...item, status: 'in_progress' } });
    }
    out.push({ type: 'response.output_item.done', output_index, item });
  });
  out.push({ type: full.status === 'completed' ? 'response.completed' : 'response.incomplete', response: full });
  return out.map((e, i) => ({ ...e, sequence_number: i }));
}

// ---- server ---------------------------------------------------------------------------------------
export type FakeUpstreams = { url: string; requests: Recorded[]; close(): Promise<void>; server: Server };

export async function startFakeUpstreams(): Promise<FakeUpstreams> {
  const requests: Recorded[] = [];
  const server = createServer((req, res) => void (async () => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json) : {};
    const path = req.url ?? '/';
    requests.push({ path, headers: req.headers, body });
    try {
      await route(path, body, req, res);
    } catch (err) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `fake upstream bug: ${(err as Error).message}` } }));
    }
  })());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    server,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

async function failures(model: string, res: ServerResponse, kind: 'openai' | 'anthropic' | 'gemini'): Promise<boolean> {
  const m = /fail(\d{3})/.exec(model);
  if (m) {
    const status = Number(m[1]);
    const body =
      kind === 'anthropic'
        ? { type: 'error', error: { type: status === 429 ? 'rate_limit_error' : status >= 500 ? 'api_error' : 'invalid_request_error', message: `fake ${status}` } }
        : kind === 'gemini'
          ? { error: { code: status, message: `fake ${status}`, status: status === 429 ? 'RESOURCE_EXHAUSTED' : 'INTERNAL' } }
          : { error: { message: `fake ${status}`, type: status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code: null } };
    res.writeHead(status, { 'content-type': 'application/json', ...(status === 429 ? { 'retry-after': '0' } : {}) });
    res.end(JSON.stringify(body));
    return true;
  }
  if (model.includes('hang')) {
    await sleep(5_000);
  }
  // An upstream that takes its time before answering (whose time is not the gateway's).
  if (model.includes('delayed')) await sleep(300);
  return false;
}

async function writeStream(res: ServerResponse, frames: string[], model: string, errorFrame: string) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const failAt = Math.min(3, frames.length - 1);
  for (let i = 0; i < frames.length; i++) {
    if (model.includes('midcut') && i === failAt) {
      await sleep(50); // let what was written reach the client before the connection drops
      return res.destroy();
    }
    if (model.includes('miderror') && i === failAt) {
      res.write(errorFrame);
      return res.end();
    }
    if (model.includes('slow')) await sleep(100);
    if (res.destroyed) return;
    res.write(frames[i]);
  }
  res.end();
}

// ---- embeddings and moderation ----------------------------------------------------------------
const MODERATION_CATEGORIES = ['hate', 'hate/threatening', 'harassment', 'harassment/threatening', 'illicit', 'illicit/violent', 'self-harm', 'self-harm/intent', 'self-harm/instructions', 'sexual', 'sexual/minors', 'violence', 'violence/graphic'];

function embeddingsResponse(body: Json): Json {
  const fixtureJson = JSON.parse(fixture('openai/src/embedding/__fixtures__/openai-embedding.json'));
  const inputs: string[] = typeof body.input === 'string' ? [body.input] : body.input;
  const data = inputs.map((_, index) => {
    const floats: number[] = fixtureJson.data[index % fixtureJson.data.length].embedding;
    const buf = Buffer.alloc(floats.length * 4);
    floats.forEach((v, i) => buf.writeFloatLE(v, i * 4));
    return { object: 'embedding', index, embedding: body.encoding_format === 'base64' ? buf.toString('base64') : floats };
  });
  return { ...fixtureJson, data, model: body.model };
}

function moderationResponse(body: Json): Json {
  const inputs: unknown[] = typeof body.input === 'string' ? [body.input] : body.input;
  return {
    id: 'modr-fake1',
    model: body.model,
    results: inputs.map((i) => {
      const violent = JSON.stringify(i).includes('kill');
      const categories = Object.fromEntries(MODERATION_CATEGORIES.map((c) => [c, violent && c === 'violence']));
      const category_scores = Object.fromEntries(MODERATION_CATEGORIES.map((c) => [c, violent && c === 'violence' ? 0.91 : 0.0012]));
      const category_applied_input_types = Object.fromEntries(MODERATION_CATEGORIES.map((c) => [c, ['text']]));
      return { flagged: violent, categories, category_scores, category_applied_input_types };
    }),
  };
}

async function route(path: string, body: Json, req: IncomingMessage, res: ServerResponse) {
  if (path.endsWith('/embeddings') || path.endsWith('/moderations')) {
    if (await failures(body.model, res, 'openai')) return;
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(JSON.stringify(path.endsWith('/embeddings') ? embeddingsResponse(body) : moderationResponse(body)));
  }
  const embed = /\/models\/([^:]+):batchEmbedContents/.exec(path);
  if (embed) {
    if (await failures(decodeURIComponent(embed[1]!), res, 'gemini')) return;
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({ embeddings: body.requests.map((r: Json, i: number) => ({ values: [0.25 * (i + 1), -0.5, 1.5, r.content.parts[0].text.length] })) }));
  }
  // Token counts, each vendor's own shape: a fixed base per vendor plus the number of messages or
  // contents counted, so a test knows which upstream counted and what it was sent.
  const countAt = /\/models\/([^:]+):countTokens$/.exec(path);
  if (path.endsWith('/messages/count_tokens') || path.endsWith('/responses/input_tokens') || countAt) {
    const model: string = countAt ? decodeURIComponent(countAt[1]!) : body.model;
    const vendor = countAt ? 'gemini' : path.endsWith('/input_tokens') ? 'openai' : 'anthropic';
    if (await failures(model, res, vendor)) return;
    res.writeHead(200, { 'content-type': 'application/json' });
    if (vendor === 'gemini') return res.end(JSON.stringify({ totalTokens: 2000 + body.generateContentRequest.contents.length, promptTokensDetails: [{ modality: 'TEXT', tokenCount: 2000 }] }));
    if (vendor === 'openai') return res.end(JSON.stringify({ object: 'response.input_tokens', input_tokens: 3000 + body.input.length }));
    return res.end(JSON.stringify({ input_tokens: 1000 + body.messages.length }));
  }
  if (path.startsWith('/search?')) {
    // A SearXNG instance's JSON API.
    const q = new URL(path, 'http://x').searchParams;
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({ query: q.get('q'), results: [{ ...SEARCH_HIT, content: 'Sunny, 21 °C.' }, { url: 'https://example.org/forecast', title: 'Forecast', content: 'Clear skies.' }] }));
  }
  if (path.endsWith('/responses')) {
    const model: string = body.model;
    if (await failures(model, res, 'openai')) return;
    const tools = (body.tools ?? []).filter((t: Json) => t.type === 'function').map((t: Json) => t.name);
    const webSearch = (body.tools ?? []).some((t: Json) => String(t.type).startsWith('web_search'));
    const fmt = body.text?.format?.type;
    let script = decide(model, tools, responsesToolResult(body), fmt === 'json_schema' || fmt === 'json_object', body.max_output_tokens, body);
    if (script === 'fixture') script = { text: webSearch ? 'News: AI is everywhere.' : 'Hello from the Responses API.', finish: 'stop', usage: { input: 14, output: 9 } };
    if (model.includes('miderror') && body.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const l of lines('openai/src/responses/__fixtures__/openai-error.1.chunks.txt')) res.write(`event: ${JSON.parse(l).type}\ndata: ${l}\n\n`);
      return res.end();
    }
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify(responsesJson(script, model, webSearch)));
    }
    const frames = responsesEvents(script, model, webSearch).map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
    return writeStream(res, frames, model.replace('miderror', ''), '');
  }
  if (path.endsWith('/chat/completions')) {
    const model: string = body.model;
    if (await failures(model, res, 'openai')) return;
    const tools = (body.tools ?? []).map((t: Json) => t.function.name);
    const script = decide(model, tools, openaiToolResult(body), body.response_format?.type === 'json_schema' || body.response_format?.type === 'json_object', body.max_completion_tokens ?? body.max_tokens, body);
    if (!body.stream) {
      const json = script === 'fixture' ? JSON.parse(fixture('openai/src/chat/__fixtures__/openai-text.json')) : openaiJson(script, model);
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify(json));
    }
    const include = body.stream_options?.include_usage === true;
    let payloads = script === 'fixture' ? lines('openai/src/chat/__fixtures__/openai-text.chunks.txt') : openaiChunks(script, model, include);
    if (script === 'fixture' && !include) payloads = payloads.filter((l) => !l.includes('"choices":[]'));
    const frames = [...payloads.map((p) => `data: ${p}\n\n`), 'data: [DONE]\n\n'];
    if (model.includes('keepalive')) frames.splice(1, 0, ': OPENROUTER PROCESSING\n\n');
    return writeStream(res, frames, model, `data: ${JSON.stringify({ error: { code: 502, message: 'fake mid-stream failure' } })}\n\n`);
  }
  if (path.endsWith('/messages')) {
    const model: string = body.model;
    if (await failures(model, res, 'anthropic')) return;
    const tools = (body.tools ?? []).map((t: Json) => t.name);
    const forcedJson = body.tool_choice?.type === 'tool' && body.tool_choice.name === 'json_response';
    let script = decide(model, forcedJson ? [] : tools.filter((n: string) => n !== 'web_search'), anthropicToolResult(body), forcedJson || body.output_config?.format?.type === 'json_schema' || body.output_format?.type === 'json_schema', body.max_tokens, body);
    if ((body.tools ?? []).some((t: Json) => String(t.type).startsWith('web_search_'))) script = { serverSearch: true, finish: 'stop', usage: { input: 2000, output: 40 } };
    if (forcedJson && script !== 'fixture') script = { toolCall: { id: 'x', name: 'json_response', args: JSON.parse(script.text!) }, finish: 'tool', usage: script.usage };
    if (!body.stream) {
      const json = script === 'fixture' ? JSON.parse(fixture('anthropic/src/__fixtures__/anthropic-text.json')) : anthropicJson(script, model);
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify(json));
    }
    const events = script === 'fixture' ? lines('anthropic/src/__fixtures__/anthropic-text.chunks.txt').map((l) => JSON.parse(l)) : anthropicEvents(script, model);
    // Real Anthropic streams pad some JSON with spaces; keep one padded event in every stream.
    const frames = events.map((e, i) => `event: ${e.type}\ndata: ${i === 2 ? JSON.stringify(e).replace(/}$/, '  }') : JSON.stringify(e)}\n\n`);
    return writeStream(res, frames, model, `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })}\n\n`);
  }
  const g = /\/models\/([^:]+):(generateContent|streamGenerateContent)/.exec(path);
  if (g) {
    const model = decodeURIComponent(g[1]!);
    if (await failures(model, res, 'gemini')) return;
    const tools = (body.tools ?? []).flatMap((t: Json) => (t.functionDeclarations ?? []).map((f: Json) => f.name));
    const script = decide(model, tools, geminiToolResult(body), body.generationConfig?.responseMimeType === 'application/json', body.generationConfig?.maxOutputTokens, body);
    if (g[2] === 'generateContent') {
      const json = script === 'fixture' ? JSON.parse(fixture('google/src/__fixtures__/google-text.json')) : geminiJson(script, model);
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify(json));
    }
    const chunks = script === 'fixture' ? lines('google/src/__fixtures__/google-text.chunks.txt') : geminiChunksFor(script, model).map((c) => JSON.stringify(c));
    return writeStream(res, chunks.map((c) => `data: ${c}\r\n\r\n`), model, `data: ${JSON.stringify({ error: { code: 503, message: 'fake mid-stream failure', status: 'UNAVAILABLE' } })}\r\n\r\n`);
  }
  res.writeHead(404, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message: `fake upstream has no route ${req.method} ${path}` } }));
}
