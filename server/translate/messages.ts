// The Messages client format: request → canonical, canonical → response and SSE events.
import type { z } from 'zod';
import type { MessagesContentBlock, MessagesInput, MessagesRequest, MessagesResponse, MessagesStopReason, MessagesStreamEvent, MessagesUsage } from '../../contract/messages.ts';
import { randomToken } from '../runtime/secrets.ts';
import { errors, type GatewayError } from '../runtime/errors.ts';
import { budgetToEffort, parseJsonArgs } from './arguments-and-effort.ts';
import type * as C from './canonical.ts';
import { emptyUsage } from './canonical.ts';
import { cacheWrite5mTokens, uncachedInput } from './usage.ts';
import { MESSAGES_FIELDS, droppedFields } from './request-fields.ts';
import { cacheControlOf, lastCacheControl, withCacheControl } from './cache-hints.ts';

type Message = MessagesRequest['messages'][number];
type Block = z.infer<typeof MessagesContentBlock>;
type ToolResultBlock = Extract<Block, { type: 'tool_result' }>;
type ToolResultInner = Exclude<NonNullable<ToolResultBlock['content']>, string>[number];
type ImageSource = Extract<Block, { type: 'image' }>['source'];
type Tool = NonNullable<MessagesRequest['tools']>[number];
type CustomTool = Extract<Tool, { input_schema: unknown }>;

/**
 * Narrows a block to the described block of `type`. The contract's catch-all block (`OtherBlock`:
 * types it does not describe) never has a described type: its refine refuses those.
 */
const isBlock = <B extends { type: string }, T extends string>(b: B, type: T): b is Extract<B, { type: T }> => b.type === type;

/** File ids are refused before (decodeBlocks, toolResultContent): only Anthropic reads them. */
function imageSource(source: Exclude<ImageSource, { type: 'file' }>): C.ImageSource {
  return source.type === 'url' ? { kind: 'url', url: source.url } : { kind: 'base64', mediaType: source.media_type, data: source.data };
}

/** A block only Anthropic models can take: the request is then routed to them alone. */
class NativeOnly extends Error {
  constructor(
    message: string,
    readonly param: string,
  ) {
    super(message);
  }
}

/** What decoding the conversation learns along the way. */
type Seen = {
  /** Deferred tools (`defer_loading`) a tool search loaded through `tool_reference` blocks. */
  referencedTools: Set<string>;
  /** What had to be left out for other providers, for X-Gateway-Warnings. */
  dropped: Set<string>;
  /** The first block only Anthropic models take: the request goes to them alone. */
  nativeOnly: NativeOnly | null;
  /** What only Anthropic models read, for the hold (canonical OpaqueInput). */
  opaque: C.OpaqueInput[];
};

/** A block only Anthropic models take: the request is routed to them alone, and the hold counts it. */
function nativeBlock(seen: Seen, b: { type: string }, err: NativeOnly | null): void {
  if (err) seen.nativeOnly ??= err;
  seen.opaque.push(...opaqueOf(b));
}

const chars = (v: unknown) => (typeof v === 'string' ? v.length : 0);
const textsOf = (v: unknown) => (typeof v === 'string' ? v.length : Array.isArray(v) ? v.reduce((n: number, b) => n + chars((b as { text?: unknown } | null)?.text), 0) : 0);

/**
 * What the hold needs of a block other providers do not get (pipeline/estimate.ts): an image by
 * file id (size unknown); a document's text, or its bytes (a PDF: pages of text and images); a
 * search result's text; uploaded or fetched files, which only Anthropic sees; and for any other
 * block (earlier server tool calls and their results) the length of its JSON, read as text.
 */
function opaqueOf(b: { type: string; [k: string]: unknown }): C.OpaqueInput[] {
  const source = (b.source ?? null) as Record<string, unknown> | null;
  switch (b.type) {
    case 'image':
      return [{ kind: 'image', source: null }];
    case 'document': {
      const around = chars(b.title) + chars(b.context);
      if (source?.type === 'text') return [{ kind: 'text', chars: around + chars(source.data) }];
      if (source?.type === 'content') {
        const inner = Array.isArray(source.content) ? (source.content as Record<string, unknown>[]) : [];
        const images = inner.filter((c) => c?.type === 'image').map((c): C.OpaqueInput => {
          const s = (c.source ?? null) as Record<string, unknown> | null;
          if (s?.type === 'base64' && typeof s.data === 'string') return { kind: 'image', source: { kind: 'base64', mediaType: String(s.media_type ?? ''), data: s.data } };
          return { kind: 'image', source: s?.type === 'url' && typeof s.url === 'string' ? { kind: 'url', url: s.url } : null };
        });
        return [{ kind: 'text', chars: around + textsOf(source.content) }, ...images];
      }
      const mediaType = typeof source?.media_type === 'string' ? source.media_type : undefined;
      return [{ kind: 'media', mediaType, ...(source?.type === 'base64' && typeof source.data === 'string' ? { data: source.data } : {}) }];
    }
    case 'search_result':
      return [{ kind: 'text', chars: chars(b.source) + chars(b.title) + textsOf(b.content) }];
    case 'container_upload':
    case 'web_fetch_tool_result':
      return [{ kind: 'media' }];
    default:
      return [{ kind: 'text', chars: JSON.stringify(b).length }];
  }
}

function toolResultContent(inner: ToolResultInner[], at: string, seen: Seen): C.ToolResultPart['content'] {
  return inner.flatMap((c, k): C.ToolResultPart['content'] => {
    if (isBlock(c, 'text')) return [{ type: 'text', text: c.text, ...withCacheControl(cacheControlOf(c.cache_control)) }];
    if (isBlock(c, 'image')) {
      if (c.source.type === 'file') {
        nativeBlock(seen, c, new NativeOnly('Image file ids can only be sent to Anthropic models.', `${at}.content[${k}].source`));
        return [];
      }
      return [{ type: 'image', source: imageSource(c.source), ...withCacheControl(cacheControlOf(c.cache_control)) }];
    }
    if (c.type === 'tool_reference') {
      // Anthropic's tool search loads a deferred tool by reference; other models read that it is loaded.
      // `tool_name` is not in the contract: a name only if it is a string (tools are looked up by name).
      if (typeof c.tool_name === 'string') seen.referencedTools.add(c.tool_name);
      return [{ type: 'text', text: `Tool loaded: ${c.tool_name}` }];
    }
    // Left out for other providers; Anthropic models get it, passed through.
    seen.dropped.add(`${c.type} blocks in tool results`);
    nativeBlock(seen, c, null);
    return [];
  });
}

function decodeBlocks(content: string | Block[], at: string, seen: Seen): C.Part[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  const parts: C.Part[] = [];
  let pendingSignature: string | undefined;
  content.forEach((b, j) => {
    if (isBlock(b, 'text')) parts.push({ type: 'text', text: b.text, ...withCacheControl(cacheControlOf(b.cache_control)) });
    else if (isBlock(b, 'image')) {
      if (b.source.type === 'file') nativeBlock(seen, b, new NativeOnly('Image file ids can only be sent to Anthropic models.', `${at}[${j}].source`));
      else parts.push({ type: 'image', source: imageSource(b.source), ...withCacheControl(cacheControlOf(b.cache_control)) });
    } else if (isBlock(b, 'tool_use')) {
      parts.push({ type: 'tool_call', id: b.id, name: b.name, arguments: JSON.stringify(b.input ?? {}), thoughtSignature: pendingSignature });
      pendingSignature = undefined;
    } else if (isBlock(b, 'tool_result')) {
      const inner: ToolResultInner[] = typeof b.content === 'string' ? [{ type: 'text', text: b.content }] : (b.content ?? []);
      parts.push({ type: 'tool_result', toolCallId: b.tool_use_id, content: toolResultContent(inner, `${at}[${j}]`, seen), isError: b.is_error, ...withCacheControl(cacheControlOf(b.cache_control)) });
    } else if (isBlock(b, 'thinking')) {
      // An empty thinking block carrying only a signature is how this gateway hands back a
      // Gemini thought signature: it belongs to the next tool_use.
      if (!b.thinking && b.signature && content[j + 1]?.type === 'tool_use') pendingSignature = b.signature;
      else parts.push({ type: 'reasoning', text: b.thinking, signature: b.signature });
    } else if (isBlock(b, 'redacted_thinking')) parts.push({ type: 'reasoning', text: '', redactedData: b.data });
    else nativeBlock(seen, b, new NativeOnly(`Content blocks of type '${b.type}' can only be sent to Anthropic models.`, `${at}[${j}].type`));
  });
  return parts;
}

/** Anthropic's effort levels are the canonical ones (`max` included). */
const effortOf = (effort: NonNullable<MessagesRequest['output_config']>['effort']): C.ReasoningEffort | undefined => effort ?? undefined;

/**
 * `thinking` and `output_config.effort` → canonical reasoning. Explicit budgets are always sent;
 * adaptive thinking and a bare effort leave it to the model (Anthropic's default effort is high).
 */
function reasoningOf(body: MessagesInput): C.Request['reasoning'] {
  const thinking = body.thinking;
  const effort = effortOf(body.output_config?.effort);
  switch (thinking?.type) {
    case 'enabled':
      return { budgetTokens: thinking.budget_tokens, effort: effort ?? budgetToEffort(thinking.budget_tokens) };
    case 'disabled':
      return undefined;
    case 'adaptive':
    case 'between_tools':
      return { effort: effort ?? 'high', adaptive: true };
    default:
      return effort ? { effort, adaptive: true } : undefined;
  }
}

/** A system message's text: its text blocks. */
const textOf = (content: Extract<Message, { role: 'system' }>['content']): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.filter((b) => isBlock(b, 'text')).map((b) => b.text).join('\n\n') : '';

export type DecodedMessages = {
  request: C.Request;
  /** Set when the request holds what only Anthropic models can take. */
  nativeOnly: GatewayError | null;
};

export function messagesToCanonical(body: MessagesInput): DecodedMessages {
  const messages: C.Message[] = [];
  const system = body.system === undefined ? [] : typeof body.system === 'string' ? [body.system] : body.system.map((b) => b.text);
  const systemMarks = typeof body.system === 'object' ? body.system.map((b) => cacheControlOf(b.cache_control)) : system.map(() => undefined);
  const names = new Map<string, string>();
  const seen: Seen = { referencedTools: new Set(), dropped: new Set(), nativeOnly: null, opaque: [] };
  body.messages.forEach((m, i) => {
    let parts: C.Part[];
    if (m.role === 'system') {
      if (Array.isArray(m.content) && m.content.some((b) => b.type !== 'text')) {
        seen.nativeOnly ??= new NativeOnly('System messages with blocks other than text can only be sent to Anthropic models.', `messages[${i}].content`);
        for (const b of m.content) if (b.type !== 'text') nativeBlock(seen, b, null);
      }
      const text = textOf(m.content);
      // Before the first turn a system message is part of the system prompt, as everywhere.
      if (!messages.length) {
        if (text) {
          system.push(text);
          systemMarks.push(lastCacheControl(m.content));
        }
        return;
      }
      parts = text ? [{ type: 'text', text }] : [];
    } else parts = decodeBlocks(m.content, `messages[${i}].content`, seen);
    for (const p of parts) {
      if (p.type === 'tool_call') names.set(p.id, p.name);
      if (p.type === 'tool_result') p.name = names.get(p.toolCallId);
    }
    const prev = messages[messages.length - 1];
    if (prev && prev.role === m.role) prev.content.push(...parts);
    else messages.push({ role: m.role, content: parts });
  });
  const tc = body.tool_choice;
  // `output_format` is the beta's older spelling of `output_config.format`, which wins when a client sends both.
  const [format, formatParam] = body.output_config?.format ? [body.output_config.format, 'output_config.format'] : [body.output_format, 'output_format'];
  // Fields this decoder does not read reach only Anthropic models; the others name them.
  const dropped = droppedFields(body, MESSAGES_FIELDS);
  const untranslated = [...dropped.untranslated, ...seen.dropped];
  // Remote MCP servers' tool listings reach the model as input Anthropic bills; their size is unknown here.
  const opaque: C.OpaqueInput[] = body.mcp_servers === undefined ? seen.opaque : [...seen.opaque, { kind: 'stored', what: 'mcp_servers' }];
  const request: C.Request = {
    model: body.model,
    system,
    ...(systemMarks.some(Boolean) ? { systemCacheControl: systemMarks } : {}),
    ...withCacheControl(cacheControlOf(body.cache_control)),
    messages,
    // A deferred tool is shown to the model once a tool search loaded it, as Anthropic does.
    tools: body.tools
      ?.filter((t): t is CustomTool => 'input_schema' in t && (!t.defer_loading || seen.referencedTools.has(t.name)))
      .map((t) => ({ name: t.name, description: t.description, parameters: t.input_schema, ...withCacheControl(cacheControlOf(t.cache_control)) })),
    toolChoice: tc ? (tc.type === 'tool' ? { name: tc.name } : tc.type === 'any' ? 'required' : tc.type) : undefined,
    parallelToolCalls: tc?.disable_parallel_tool_use ? false : undefined,
    maxTokens: body.max_tokens,
    temperature: body.temperature,
    topP: body.top_p,
    topK: body.top_k,
    stop: body.stop_sequences,
    reasoning: reasoningOf(body),
    responseFormat: format ? { type: 'json_schema', name: 'output', schema: format.schema, param: formatParam } : undefined,
    stream: body.stream === true,
    user: body.metadata?.user_id ?? undefined,
    affinityHint: body.metadata?.user_id ? `user:${body.metadata.user_id}` : undefined,
    webSearch: body.tools?.some((t) => typeof t.type === 'string' && t.type.startsWith('web_search_')) ?? false,
    ...(untranslated.length ? { untranslated } : {}),
    ...(opaque.length ? { opaque } : {}),
    ...(dropped.unknown.length ? { unknownFields: dropped.unknown } : {}),
  };
  return { request, nativeOnly: seen.nativeOnly ? errors.invalid(seen.nativeOnly.message, seen.nativeOnly.param) : null };
}

export const messagesStop = (r: C.FinishReason, stopSequence?: string | null): z.infer<typeof MessagesStopReason> =>
  r === 'length' ? 'max_tokens' : r === 'tool_calls' ? 'tool_use' : r === 'content_filter' || r === 'refusal' ? 'refusal' : r === 'pause' ? 'pause_turn' : stopSequence ? 'stop_sequence' : 'end_turn';

/**
 * Canonical usage in Anthropic's shape: `input_tokens` is what is left of the prompt once the
 * cache reads and writes are taken out (never negative), the writes split by lifetime when there
 * are some, the thinking named in `output_tokens_details` and the searches in `server_tool_use`
 * when there were any (Anthropic's newer answers carry both).
 */
export function messagesUsage(u: C.Usage | null): z.infer<typeof MessagesUsage> {
  if (!u) return { input_tokens: 0, output_tokens: 0 };
  return {
    input_tokens: uncachedInput(u),
    output_tokens: u.outputTokens,
    cache_creation_input_tokens: u.cacheWriteTokens,
    cache_read_input_tokens: u.cachedTokens,
    ...(u.cacheWriteTokens > 0 ? { cache_creation: { ephemeral_5m_input_tokens: cacheWrite5mTokens(u), ephemeral_1h_input_tokens: u.cacheWrite1hTokens ?? 0 } } : {}),
    ...(u.reasoningTokens > 0 ? { output_tokens_details: { thinking_tokens: u.reasoningTokens } } : {}),
    ...(u.webSearchCalls ? { server_tool_use: { web_search_requests: u.webSearchCalls } } : {}),
  };
}

/** The blocks this gateway writes. */
type AnswerBlock = Extract<Block, { type: 'text' | 'thinking' | 'redacted_thinking' | 'tool_use' }>;
type StreamEvent = z.infer<typeof MessagesStreamEvent>;

export function canonicalToMessages(r: C.Response, model: string): z.infer<typeof MessagesResponse> {
  const content: AnswerBlock[] = [];
  for (const p of r.content) {
    if (p.type === 'text') content.push({ type: 'text', text: p.text });
    else if (p.type === 'reasoning') content.push(p.redactedData ? { type: 'redacted_thinking', data: p.redactedData } : { type: 'thinking', thinking: p.text, signature: p.signature ?? '' });
    else {
      if (p.thoughtSignature) content.push({ type: 'thinking', thinking: '', signature: p.thoughtSignature });
      content.push({ type: 'tool_use', id: p.id, name: p.name, input: parseJsonArgs(p.arguments) });
    }
  }
  return {
    id: `msg_${randomToken(24)}`,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: messagesStop(r.finishReason, r.stopSequence),
    stop_sequence: r.stopSequence ?? null,
    usage: messagesUsage(r.usage),
  };
}

export const sseEvent = (type: StreamEvent['type'], data: StreamEvent) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;

/** Canonical stream events → Messages SSE events, one content block open at a time. */
export class MessagesStreamEncoder {
  private readonly id = `msg_${randomToken(24)}`;
  private started = false;
  private open: 'text' | 'thinking' | 'tool_use' | null = null;
  private openTool = -1;
  private index = -1;
  private stop: C.StreamEvent & { type: 'finish' } = { type: 'finish', reason: 'stop' };
  private usage: C.Usage | null = null;

  constructor(private readonly model: string) {}

  private start(input?: Partial<C.Usage>): string {
    if (this.started) return '';
    this.started = true;
    const usage = messagesUsage(input ? { ...emptyUsage(), ...input } : null);
    return sseEvent('message_start', {
      type: 'message_start',
      message: { id: this.id, type: 'message', role: 'assistant', model: this.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 0 } },
    });
  }

  private close(): string {
    if (!this.open) return '';
    this.open = null;
    return sseEvent('content_block_stop', { type: 'content_block_stop', index: this.index });
  }

  private openBlock(kind: 'text' | 'thinking' | 'tool_use', block: AnswerBlock): string {
    const out = this.close();
    this.index++;
    this.open = kind;
    return out + sseEvent('content_block_start', { type: 'content_block_start', index: this.index, content_block: block });
  }

  private delta(delta: Extract<StreamEvent, { type: 'content_block_delta' }>['delta']): string {
    return sseEvent('content_block_delta', { type: 'content_block_delta', index: this.index, delta });
  }

  push(e: C.StreamEvent): string {
    let out = e.type === 'start' ? this.start(e.usage) : this.start();
    switch (e.type) {
      case 'text':
        if (!e.text) return out;
        if (this.open !== 'text') out += this.openBlock('text', { type: 'text', text: '' });
        return out + this.delta({ type: 'text_delta', text: e.text });
      case 'reasoning':
        if (this.open !== 'thinking') out += this.openBlock('thinking', { type: 'thinking', thinking: '', signature: '' });
        return out + this.delta({ type: 'thinking_delta', thinking: e.text });
      case 'reasoning_signature':
        if (this.open !== 'thinking') out += this.openBlock('thinking', { type: 'thinking', thinking: '', signature: '' });
        return out + this.delta({ type: 'signature_delta', signature: e.signature }) + this.close();
      case 'reasoning_redacted':
        return out + this.openBlock('thinking', { type: 'redacted_thinking', data: e.data }) + this.close();
      case 'tool_call_start':
        if (e.thoughtSignature) {
          out += this.openBlock('thinking', { type: 'thinking', thinking: '', signature: '' });
          out += this.delta({ type: 'signature_delta', signature: e.thoughtSignature }) + this.close();
        }
        this.openTool = e.index;
        return out + this.openBlock('tool_use', { type: 'tool_use', id: e.id, name: e.name, input: {} });
      case 'tool_call_delta':
        if (this.open !== 'tool_use' || this.openTool !== e.index || !e.arguments) return out;
        return out + this.delta({ type: 'input_json_delta', partial_json: e.arguments });
      case 'finish':
        this.stop = e;
        return out;
      case 'usage':
        this.usage = e.usage;
        return out;
      default:
        return out;
    }
  }

  end(): string {
    const u = messagesUsage(this.usage);
    return (
      this.start() +
      this.close() +
      sseEvent('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: messagesStop(this.stop.reason, this.stop.stopSequence), stop_sequence: this.stop.stopSequence ?? null },
        usage: u,
      }) +
      sseEvent('message_stop', { type: 'message_stop' })
    );
  }
}
