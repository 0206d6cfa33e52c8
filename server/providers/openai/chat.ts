// OpenAI chat-completions wire format (OpenAI itself and every OpenAI-compatible server).
import { randomToken } from '../../runtime/secrets.ts';
import * as C from '../../translate/canonical.ts';
import { type CallContext, type StreamDecoder, type TextAdapter } from '../types.ts';
import { UpstreamStreamError } from '../../upstream/errors.ts';
import { budgetToEffort } from '../../translate/arguments-and-effort.ts';
import { vendorTarget } from '../vendor-client.ts';
import { openaiClient } from './client.ts';
import { asWire } from '../../upstream/json.ts';
import { clampUsage, reported, whole, withReported } from '../../translate/usage.ts';
import type * as W from './wire.ts';

const imageUrl = (s: C.ImageSource) => (s.kind === 'url' ? s.url : `data:${s.mediaType};base64,${s.data}`);

/**
 * OpenAI takes system messages anywhere in the conversation; OpenAI-compatible servers get
 * mid-conversation ones as marked user text (their chat templates often allow a system message only first).
 */
function encodeMessages(req: C.Request, compatible: boolean): W.ChatRequestMessage[] {
  const out: W.ChatRequestMessage[] = [];
  if (req.system.length) out.push({ role: 'system', content: req.system.join('\n\n') });
  for (const m of compatible ? C.systemMessagesAsUserText(req.messages) : req.messages) {
    if (m.role === 'system') {
      out.push({ role: 'system', content: C.systemMessageText(m) });
      continue;
    }
    if (m.role === 'assistant') {
      const text = m.content.filter((p): p is C.TextPart => p.type === 'text').map((p) => p.text).join('');
      const calls = m.content.filter((p): p is C.ToolCallPart => p.type === 'tool_call');
      const msg: W.ChatRequestMessage & { role: 'assistant' } = { role: 'assistant', content: text || (calls.length ? null : '') };
      if (calls.length) {
        msg.tool_calls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments || '{}' } }));
      }
      out.push(msg);
      continue;
    }
    // Tool results become `tool` messages right after the assistant turn; the rest a user message.
    const rest: W.ChatContentPart[] = [];
    for (const p of m.content) {
      if (p.type === 'tool_result') {
        const text = p.content.filter((c): c is C.TextPart => c.type === 'text').map((c) => c.text).join('\n');
        out.push({ role: 'tool', tool_call_id: p.toolCallId, content: p.isError ? `Error: ${text}` : text });
        const images = p.content.filter((c): c is C.ImagePart => c.type === 'image');
        for (const img of images) rest.push({ type: 'image_url', image_url: { url: imageUrl(img.source) } });
      } else if (p.type === 'text') rest.push({ type: 'text', text: p.text });
      else if (p.type === 'image') rest.push({ type: 'image_url', image_url: { url: imageUrl(p.source), ...(p.detail ? { detail: p.detail } : {}) } });
    }
    if (rest.length) {
      const texts = rest.flatMap((r) => (r.type === 'text' ? [r.text] : []));
      out.push({ role: 'user', content: texts.length === rest.length ? texts.join('\n') : rest });
    }
  }
  return out;
}

function encodeToolChoice(tc: C.ToolChoice): W.ChatRequest['tool_choice'] {
  return typeof tc === 'string' ? tc : { type: 'function', function: { name: tc.name } };
}

export function encodeChatBody(req: C.Request, ctx: CallContext): W.ChatRequest {
  const compatible = ctx.provider.type === 'openai-compatible';
  const body: W.ChatRequest = { model: req.model, messages: encodeMessages(req, compatible) };
  if (req.maxTokens !== undefined) body[compatible ? 'max_tokens' : 'max_completion_tokens'] = req.maxTokens;
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.topP !== undefined) body.top_p = req.topP;
  if (req.topK !== undefined && compatible) body.top_k = req.topK;
  if (req.seed !== undefined) body.seed = req.seed;
  if (req.frequencyPenalty !== undefined) body.frequency_penalty = req.frequencyPenalty;
  if (req.presencePenalty !== undefined) body.presence_penalty = req.presencePenalty;
  if (req.stop?.length) body.stop = req.stop.slice(0, 4);
  if (req.tools?.length) {
    body.tools = req.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }));
    if (req.parallelToolCalls !== undefined) body.parallel_tool_calls = req.parallelToolCalls;
  }
  if (req.toolChoice !== undefined && (req.tools?.length || req.toolChoice === 'none')) body.tool_choice = encodeToolChoice(req.toolChoice);
  if (req.reasoning) {
    const effort = req.reasoning.effort ?? budgetToEffort(req.reasoning.budgetTokens ?? 0);
    // OpenAI's highest effort is xhigh.
    body.reasoning_effort = effort === 'max' ? 'xhigh' : effort;
  }
  if (req.responseFormat) {
    const f = req.responseFormat;
    body.response_format =
      f.type === 'json_schema'
        ? { type: 'json_schema', json_schema: { name: f.name, schema: f.schema, ...(f.strict !== undefined ? { strict: f.strict } : {}), ...(f.description ? { description: f.description } : {}) } }
        : { type: f.type };
  }
  if (req.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}

export function mapFinish(reason: string | null | undefined): C.FinishReason {
  switch (reason) {
    case 'length':
      return 'length';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'content_filter':
      return 'content_filter';
    default:
      return 'stop';
  }
}

/** The sum of the fields the upstream reported, or undefined when it reported none of them. */
const sumReported = (...values: unknown[]): number | undefined => {
  const known = values.map(reported).filter((v): v is number => v !== undefined);
  return known.length ? known.reduce((a, b) => a + b, 0) : undefined;
};

/**
 * OpenAI's usage, and every OpenAI-compatible server's (OpenRouter's extras included). The details
 * are parts of their totals; predicted-output tokens (accepted and rejected) are inside
 * `completion_tokens` and billed as output, so they have no part of their own. Video input
 * (OpenRouter's `video_tokens`) counts as image input: frames are images to the model.
 */
export function decodeUsage(u: W.ChatUsage | null | undefined): C.Usage | null {
  if (!u) return null;
  const p = u.prompt_tokens_details ?? {};
  const c = u.completion_tokens_details ?? {};
  const input = whole(u.prompt_tokens);
  const reasoning = whole(c.reasoning_tokens);
  let output = whole(u.completion_tokens);
  // xAI leaves reasoning out of completion_tokens yet bills it as output; its total_tokens says so
  // (prompt + completion + reasoning). OpenAI's total is prompt + completion, reasoning inside.
  if (reasoning > 0 && u.total_tokens === input + output + reasoning) output += reasoning;
  const usage: C.Usage = { inputTokens: input, outputTokens: output, cachedTokens: whole(p.cached_tokens), cacheWriteTokens: whole(p.cache_write_tokens), reasoningTokens: reasoning };
  return clampUsage(
    withReported(usage, {
      audioInputTokens: reported(p.audio_tokens),
      imageInputTokens: sumReported(p.image_tokens, p.video_tokens),
      audioOutputTokens: reported(c.audio_tokens),
      imageOutputTokens: reported(c.image_tokens),
      webSearchCalls: reported(u.server_tool_use_details?.web_search_requests),
    }),
  );
}

/** Reasoning text as OpenAI-compatible servers return it (DeepSeek, vLLM, OpenRouter). */
const reasoningOf = (m: W.ChatMessageFields): string | undefined => m.reasoning_content ?? (typeof m.reasoning === 'string' ? m.reasoning : undefined);

export function decodeChatResponse(b: W.ChatCompletion): C.Response {
  const choice = b.choices?.[0];
  const msg: W.ChatMessage = choice?.message ?? {};
  const content: C.Response['content'] = [];
  const reasoning = reasoningOf(msg);
  if (reasoning) content.push({ type: 'reasoning', text: reasoning });
  if (typeof msg.content === 'string' && msg.content) content.push({ type: 'text', text: msg.content });
  if (typeof msg.refusal === 'string' && msg.refusal) content.push({ type: 'text', text: msg.refusal });
  for (const tc of msg.tool_calls ?? []) {
    content.push({ type: 'tool_call', id: tc.id, name: tc.function?.name ?? '', arguments: tc.function?.arguments ?? '{}' });
  }
  return {
    id: b.id ?? `chatcmpl-${randomToken(24)}`,
    model: b.model ?? '',
    content,
    finishReason: msg.refusal ? 'refusal' : mapFinish(choice?.finish_reason),
    usage: decodeUsage(b.usage),
  };
}

export class ChatStreamDecoder implements StreamDecoder {
  private started = false;
  private done = false;
  private readonly toolIndexes = new Set<number>();

  push(e: { data: string }): C.StreamEvent[] {
    if (e.data === '[DONE]') {
      this.done = true;
      return [];
    }
    return this.pushParsed(JSON.parse(e.data));
  }

  pushParsed(data: unknown): C.StreamEvent[] {
    const chunk = asWire<W.ChatCompletionChunk>(data);
    if (chunk.error) throw new UpstreamStreamError(chunk.error.message ?? JSON.stringify(chunk.error), chunk.error.type, chunk.error);
    const out: C.StreamEvent[] = [];
    if (!this.started) {
      this.started = true;
      out.push({ type: 'start', id: chunk.id ?? `chatcmpl-${randomToken(24)}`, model: chunk.model ?? '' });
    }
    const choice = chunk.choices?.[0];
    if (choice) {
      const d: W.ChatDelta = choice.delta ?? {};
      const reasoning = reasoningOf(d);
      if (reasoning) out.push({ type: 'reasoning', text: reasoning });
      if (typeof d.content === 'string' && d.content) out.push({ type: 'text', text: d.content });
      if (typeof d.refusal === 'string' && d.refusal) out.push({ type: 'text', text: d.refusal });
      for (const tc of d.tool_calls ?? []) {
        const index = tc.index ?? 0;
        if (!this.toolIndexes.has(index)) {
          this.toolIndexes.add(index);
          out.push({ type: 'tool_call_start', index, id: tc.id ?? `call_${randomToken(24)}`, name: tc.function?.name ?? '' });
        }
        if (tc.function?.arguments) out.push({ type: 'tool_call_delta', index, arguments: tc.function.arguments });
      }
      if (choice.finish_reason) out.push({ type: 'finish', reason: mapFinish(choice.finish_reason) });
    }
    const usage = decodeUsage(chunk.usage);
    if (usage) out.push({ type: 'usage', usage });
    return out;
  }

  end(): C.StreamEvent[] {
    if (!this.done) throw new UpstreamStreamError('the upstream stream ended before [DONE]');
    return [];
  }
}

export const openAiChat: TextAdapter = {
  format: 'openai-chat',
  // Chat upstreams search only when passed `web_search_options` through; a translated request has none.
  nativeWebSearch: false,
  endpoint: (_req, ctx) => vendorTarget(openaiClient, ctx.provider, '/chat/completions'),
  body: encodeChatBody,
  decode: (body) => decodeChatResponse(asWire<W.ChatCompletion>(body)),
  streamDecoder: () => new ChatStreamDecoder(),
};
