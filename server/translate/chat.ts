// The chat-completions client format: request → canonical, canonical → response and SSE chunks.
import type { z } from 'zod';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, ChatToolCall, FinishReason } from '../../contract/chat.ts';
import type { ChatUsage } from '../../contract/common.ts';
import { randomToken } from '../runtime/secrets.ts';
import { errors } from '../runtime/errors.ts';
import { objectAt, stringAt, type JsonObject, type JsonValue } from '../upstream/json.ts';
import type * as C from './canonical.ts';
import { affinityHintOf } from './canonical.ts';
import { CHAT_FIELDS, droppedFields } from './request-fields.ts';
import { cacheControlOf, lastCacheControl, withCacheControl } from './cache-hints.ts';

type AssistantMessage = Extract<ChatCompletionRequest['messages'][number], { role: 'assistant' }>;

/**
 * What the decoder reads that the contract passes through without declaring, as the client sent it
 * (JSON): reasoning handed back on an assistant message, Google's signature on a tool call.
 */
type SentReasoning = AssistantMessage & { reasoning_details?: JsonValue };
type SentToolCall = z.infer<typeof ChatToolCall> & { extra_content?: JsonValue };
type SentBody = ChatCompletionRequest & { web_search_options?: JsonValue };

// What a chat answer's message and chunk deltas carry that the contract leaves undeclared:
// OpenRouter-style reasoning, Google's thought signature on a tool call, web citations.
type ReasoningDetail = { type: 'reasoning.text'; text: string; signature?: string } | { type: 'reasoning.encrypted'; data: string; format: 'anthropic-claude-v1' };
type ExtraContent = { extra_content?: { google: { thought_signature: string } } };
type UrlCitation = { type: 'url_citation'; url_citation: { url: string; title: string; start_index: number; end_index: number } };

type ChatAnswer = z.infer<typeof ChatCompletion>;
type AnswerMessage = ChatAnswer['choices'][number]['message'] & {
  annotations?: UrlCitation[];
  tool_calls?: (z.infer<typeof ChatToolCall> & ExtraContent)[];
  reasoning_details?: ReasoningDetail[];
};
type ChatChunk = z.infer<typeof ChatCompletionChunk>;
type ChunkChoice = ChatChunk['choices'][number] & { logprobs: null };
type ChunkToolCall = NonNullable<ChatChunk['choices'][number]['delta']['tool_calls']>[number] & ExtraContent;
type ChunkDelta = ChatChunk['choices'][number]['delta'] & { tool_calls?: ChunkToolCall[]; reasoning_details?: ReasoningDetail[] };

export function parseImageUrl(url: string, param: string): C.ImageSource {
  if (url.startsWith('data:')) {
    const inline = dataUrlOf(url);
    if (!inline) throw errors.invalid('Image data URIs must be base64 encoded (data:<type>;base64,<data>).', param);
    return { kind: 'base64', mediaType: inline.mediaType, data: inline.data.replace(/\s+/g, '') };
  }
  return { kind: 'url', url };
}

/** A base64 data URL's media type and data (not copied: a slice of the text, whitespace and all), else null. */
export function dataUrlOf(url: string): { mediaType: string; data: string } | null {
  const m = /^data:([\w.+-]+\/[\w.+-]+)(?:;[\w-]+=[^;,]+)*;base64,/.exec(url);
  return m ? { mediaType: m[1]!, data: url.slice(m[0].length) } : null;
}

/** The text of any message's content (system, developer and tool content is text parts only). */
const textOf = (content: AssistantMessage['content']): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((p) => (p.type === 'text' ? p.text : p.refusal ?? '')).join('') : '';


/** Signatures chat clients hand back: OpenRouter-style `reasoning_details`, Google-style `extra_content`. */
function reasoningParts(m: SentReasoning): C.ReasoningPart[] {
  const details = Array.isArray(m.reasoning_details) ? m.reasoning_details : [];
  const parts: C.ReasoningPart[] = [];
  for (const detail of details) {
    const d = objectAt(detail);
    if (!d) continue;
    const text = stringAt(d.text);
    const signature = stringAt(d.signature);
    const data = stringAt(d.data);
    if (d.type === 'reasoning.text' && (text || signature)) parts.push({ type: 'reasoning', text: text ?? '', signature });
    else if (d.type === 'reasoning.encrypted' && data && !d.id) parts.push({ type: 'reasoning', text: '', redactedData: data });
  }
  if (!parts.length && typeof m.reasoning_content === 'string' && m.reasoning_content) parts.push({ type: 'reasoning', text: m.reasoning_content });
  return parts;
}

const thoughtSignature = (tc: SentToolCall): string | undefined => stringAt(objectAt(objectAt(tc.extra_content)?.google)?.thought_signature);

export function chatToCanonical(body: ChatCompletionRequest): C.Request {
  const system: string[] = [];
  const systemMarks: (C.CacheControl | undefined)[] = [];
  const messages: C.Message[] = [];
  const push = (role: C.Message['role'], parts: C.Part[]) => {
    const prev = messages[messages.length - 1];
    if (prev && prev.role === role) prev.content.push(...parts);
    else messages.push({ role, content: parts });
  };
  const toolNames = new Map<string, string>();
  body.messages.forEach((m, i) => {
    switch (m.role) {
      case 'system':
      case 'developer':
        system.push(textOf(m.content));
        // OpenRouter-style breakpoints on text parts; the message's parts are joined into one entry.
        systemMarks.push(lastCacheControl(m.content));
        break;
      case 'user': {
        if (typeof m.content === 'string') return push('user', [{ type: 'text', text: m.content }]);
        const parts: C.Part[] = m.content.map((p, j) => {
          const mark = withCacheControl(cacheControlOf(p.cache_control));
          if (p.type === 'text') return { type: 'text', text: p.text, ...mark };
          if (p.type === 'image_url') return { type: 'image', source: parseImageUrl(p.image_url.url, `messages[${i}].content[${j}].image_url.url`), detail: p.image_url.detail, ...mark };
          throw errors.invalid(`Content parts of type '${p.type}' can only be sent to OpenAI-format models.`, `messages[${i}].content[${j}].type`);
        });
        return push('user', parts);
      }
      case 'assistant': {
        const parts: C.Part[] = [...reasoningParts(m)];
        const text = textOf(m.content);
        if (text) parts.push({ type: 'text', text, ...withCacheControl(lastCacheControl(m.content)) });
        for (const tc of m.tool_calls ?? []) {
          toolNames.set(tc.id, tc.function.name);
          parts.push({ type: 'tool_call', id: tc.id, name: tc.function.name, arguments: tc.function.arguments, thoughtSignature: thoughtSignature(tc) });
        }
        return push('assistant', parts);
      }
      case 'tool':
        return push('user', [
          { type: 'tool_result', toolCallId: m.tool_call_id, name: toolNames.get(m.tool_call_id), content: [{ type: 'text', text: textOf(m.content) }], ...withCacheControl(lastCacheControl(m.content)) },
        ]);
    }
  });
  const rf = body.response_format;
  const tc = body.tool_choice;
  const sent: SentBody = body;
  const dropped = droppedFields(body, CHAT_FIELDS);
  return {
    model: body.model,
    system,
    ...(systemMarks.some(Boolean) ? { systemCacheControl: systemMarks } : {}),
    ...withCacheControl(cacheControlOf(sent.cache_control)),
    messages,
    tools: body.tools?.map((t) => ({
      name: t.function.name,
      description: t.function.description,
      parameters: t.function.parameters ?? { type: 'object', properties: {} },
      ...withCacheControl(cacheControlOf(t.cache_control)),
    })),
    toolChoice: tc === undefined ? undefined : typeof tc === 'string' ? tc : { name: tc.function.name },
    parallelToolCalls: body.parallel_tool_calls,
    maxTokens: body.max_completion_tokens ?? body.max_tokens,
    temperature: body.temperature,
    topP: body.top_p,
    topK: body.top_k,
    seed: body.seed,
    frequencyPenalty: body.frequency_penalty,
    presencePenalty: body.presence_penalty,
    stop: body.stop == null ? undefined : typeof body.stop === 'string' ? [body.stop] : body.stop,
    reasoning: body.reasoning_effort ? { effort: body.reasoning_effort } : undefined,
    responseFormat:
      rf?.type === 'json_schema'
        ? { type: 'json_schema', name: rf.json_schema.name, schema: rf.json_schema.schema ?? {}, strict: rf.json_schema.strict ?? undefined, description: rf.json_schema.description }
        : rf
          ? { type: rf.type }
          : undefined,
    stream: body.stream === true,
    affinityHint: affinityHintOf(sent),
    webSearch: sent.web_search_options != null,
    ...(dropped.untranslated.length ? { untranslated: dropped.untranslated } : {}),
    ...(dropped.unknown.length ? { unknownFields: dropped.unknown } : {}),
  };
}

export const chatFinish = (r: C.FinishReason): z.infer<typeof FinishReason> =>
  r === 'length' ? 'length' : r === 'tool_calls' ? 'tool_calls' : r === 'content_filter' || r === 'refusal' ? 'content_filter' : 'stop';

/**
 * Canonical usage in OpenAI's shape: totals with their parts in the details, as OpenAI reports
 * them (`prompt_tokens` is the whole prompt, a Claude answer's cache reads and writes included).
 * Cache writes, audio and image parts are named only when there are some to name or the upstream
 * reported them; chat has no field for the 1-hour writes or for web searches.
 */
export function chatUsage(u: C.Usage): z.infer<typeof ChatUsage> {
  return {
    prompt_tokens: u.inputTokens,
    completion_tokens: u.outputTokens,
    total_tokens: u.inputTokens + u.outputTokens,
    prompt_tokens_details: {
      cached_tokens: u.cachedTokens,
      ...(u.cacheWriteTokens > 0 ? { cache_write_tokens: u.cacheWriteTokens } : {}),
      ...(u.audioInputTokens !== undefined ? { audio_tokens: u.audioInputTokens } : {}),
      ...(u.imageInputTokens !== undefined ? { image_tokens: u.imageInputTokens } : {}),
    },
    completion_tokens_details: {
      reasoning_tokens: u.reasoningTokens,
      ...(u.audioOutputTokens !== undefined ? { audio_tokens: u.audioOutputTokens } : {}),
      ...(u.imageOutputTokens !== undefined ? { image_tokens: u.imageOutputTokens } : {}),
    },
  };
}

function reasoningDetails(parts: C.ReasoningPart[]): ReasoningDetail[] {
  return parts.map((p) =>
    p.redactedData ? { type: 'reasoning.encrypted', data: p.redactedData, format: 'anthropic-claude-v1' } : { type: 'reasoning.text', text: p.text, ...(p.signature ? { signature: p.signature } : {}) },
  );
}

const toolCallJson = (p: C.ToolCallPart): z.infer<typeof ChatToolCall> & ExtraContent => ({
  id: p.id,
  type: 'function',
  function: { name: p.name, arguments: p.arguments || '{}' },
  ...(p.thoughtSignature ? { extra_content: { google: { thought_signature: p.thoughtSignature } } } : {}),
});

export function canonicalToChat(r: C.Response, model: string): ChatAnswer {
  const text = r.content.filter((p): p is C.TextPart => p.type === 'text').map((p) => p.text).join('');
  const calls = r.content.filter((p): p is C.ToolCallPart => p.type === 'tool_call');
  const reasoning = r.content.filter((p): p is C.ReasoningPart => p.type === 'reasoning');
  const message: AnswerMessage = { role: 'assistant', content: text || (calls.length ? null : ''), refusal: null };
  // Citation offsets are per text part; chat joins the parts into one string.
  let offset = 0;
  const cites = r.content.flatMap((p) => {
    if (p.type !== 'text') return [];
    const shifted = (p.annotations ?? []).map((a) => ({ ...a, start: a.start + offset, end: a.end + offset }));
    offset += p.text.length;
    return shifted;
  });
  if (cites.length) message.annotations = cites.map((a) => ({ type: 'url_citation', url_citation: { url: a.url, title: a.title, start_index: a.start, end_index: a.end } }));
  if (calls.length) message.tool_calls = calls.map(toolCallJson);
  if (reasoning.length) {
    message.reasoning_content = reasoning.map((p) => p.text).join('');
    message.reasoning_details = reasoningDetails(reasoning);
  }
  return {
    id: `chatcmpl-${randomToken(29)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: chatFinish(r.finishReason) }],
    ...(r.usage ? { usage: chatUsage(r.usage) } : {}),
  };
}

/** Canonical stream events → chat.completion.chunk SSE frames. */
export class ChatStreamEncoder {
  private readonly id = `chatcmpl-${randomToken(29)}`;
  private readonly created = Math.floor(Date.now() / 1000);
  private started = false;
  private usage: C.Usage | null = null;
  private readonly toolIndex = new Map<number, number>();

  constructor(
    private readonly model: string,
    private readonly includeUsage: boolean,
  ) {}

  private frame(choices: ChunkChoice[], extra: Pick<ChatChunk, 'usage'> = {}): string {
    const chunk: ChatChunk = { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices, ...extra };
    return `data: ${JSON.stringify(chunk)}\n\n`;
  }

  private delta(delta: ChunkDelta, finish: z.infer<typeof FinishReason> | null = null): string {
    return this.frame([{ index: 0, delta, logprobs: null, finish_reason: finish }]);
  }

  push(e: C.StreamEvent): string {
    let out = '';
    if (!this.started && e.type !== 'usage') {
      this.started = true;
      out += this.delta({ role: 'assistant', content: '' });
    }
    switch (e.type) {
      case 'text':
        return out + (e.text ? this.delta({ content: e.text }) : '');
      case 'reasoning':
        return out + (e.text ? this.delta({ reasoning_content: e.text, reasoning_details: [{ type: 'reasoning.text', text: e.text }] }) : '');
      case 'reasoning_signature':
        return out + this.delta({ reasoning_details: [{ type: 'reasoning.text', text: '', signature: e.signature }] });
      case 'reasoning_redacted':
        return out + this.delta({ reasoning_details: [{ type: 'reasoning.encrypted', data: e.data, format: 'anthropic-claude-v1' }] });
      case 'tool_call_start': {
        const idx = this.toolIndex.size;
        this.toolIndex.set(e.index, idx);
        const call: ChunkToolCall = { index: idx, id: e.id, type: 'function', function: { name: e.name, arguments: '' } };
        if (e.thoughtSignature) call.extra_content = { google: { thought_signature: e.thoughtSignature } };
        return out + this.delta({ tool_calls: [call] });
      }
      case 'tool_call_delta':
        return out + this.delta({ tool_calls: [{ index: this.toolIndex.get(e.index) ?? 0, function: { arguments: e.arguments } }] });
      case 'finish':
        return out + this.delta({}, chatFinish(e.reason));
      case 'usage':
        this.usage = e.usage;
        return out;
      default:
        return out;
    }
  }

  /** The usage chunk (when the client asked for it) and the terminator. */
  end(): string {
    const usage = this.includeUsage && this.usage ? this.frame([], { usage: chatUsage(this.usage) }) : '';
    return usage + 'data: [DONE]\n\n';
  }
}
