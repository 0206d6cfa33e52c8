// Anthropic Messages wire format.
import { randomToken } from '../../runtime/secrets.ts';
import { systemMessageText } from '../../translate/canonical.ts';
import type * as C from '../../translate/canonical.ts';
import { UnsupportedContentError, pickFields, tokenCountOf, type CallContext, type StreamDecoder, type TextAdapter, type TokenCounter } from '../types.ts';
import { UpstreamStreamError } from '../../upstream/errors.ts';
import { budgetToEffort, parseJsonArgs, reasoningBudget } from '../../translate/arguments-and-effort.ts';
import { vendorTarget } from '../vendor-client.ts';
import { anthropicClient } from './client.ts';
import { asWire } from '../../upstream/json.ts';
import { clampUsage, reported, whole, withReported } from '../../translate/usage.ts';
import type * as W from './wire.ts';

/** Used when neither the client nor the model's config gives max_tokens (Anthropic requires it). */
export const DEFAULT_MAX_TOKENS = 4096;
/** Name of the forced tool that carries structured output (Anthropic has no JSON mode). */
export const JSON_TOOL = 'json_response';
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/** Anthropic tool ids must match ^[a-zA-Z0-9_-]+$; other providers' ids are mapped onto that set. */
export const toolId = (id: string) => (/^[a-zA-Z0-9_-]+$/.test(id) ? id : id.replace(/[^a-zA-Z0-9_-]/g, '_'));

/** A client's cache breakpoint on the block, tool or request it was set on (only Anthropic has a place for it). */
const cacheMark = (mark: C.CacheControl | undefined): { cache_control?: W.CacheControl } => (mark ? { cache_control: mark } : {});

function imageBlock(s: C.ImageSource, mark?: C.CacheControl): W.ImageBlock {
  if (s.kind === 'url') return { type: 'image', source: { type: 'url', url: s.url }, ...cacheMark(mark) };
  if (!IMAGE_TYPES.has(s.mediaType)) {
    throw new UnsupportedContentError(`Anthropic models accept images as JPEG, PNG, GIF or WebP, not ${s.mediaType}.`);
  }
  return { type: 'image', source: { type: 'base64', media_type: s.mediaType, data: s.data }, ...cacheMark(mark) };
}

const textBlock = (p: C.TextPart): W.TextBlock => ({ type: 'text', text: p.text, ...cacheMark(p.cacheControl) });

/**
 * The system prompt: one string, or one text block per entry when the client marked some of them
 * as cache breakpoints (the mark stays where it was set; empty entries are left out, Anthropic refuses empty blocks).
 */
function encodeSystem(req: C.Request): W.Request['system'] {
  const marks = req.systemCacheControl;
  if (!marks?.some(Boolean)) return req.system.join('\n\n');
  return req.system.flatMap((text, i) => (text ? [{ type: 'text' as const, text, ...cacheMark(marks[i]) }] : []));
}

function encodePart(p: C.Part): W.RequestBlock | null {
  switch (p.type) {
    case 'text':
      return p.text ? textBlock(p) : null;
    case 'image':
      return imageBlock(p.source, p.cacheControl);
    case 'tool_call':
      return { type: 'tool_use', id: toolId(p.id), name: p.name, input: parseJsonArgs(p.arguments) };
    case 'tool_result':
      return {
        type: 'tool_result',
        tool_use_id: toolId(p.toolCallId),
        content: p.content.map((c) => (c.type === 'text' ? textBlock(c) : imageBlock(c.source, c.cacheControl))).filter((c) => c.type !== 'text' || c.text),
        ...(p.isError ? { is_error: true } : {}),
        ...cacheMark(p.cacheControl),
      };
    case 'reasoning':
      // Thinking goes back only as Anthropic produced it: signed, or redacted.
      if (p.redactedData) return { type: 'redacted_thinking', data: p.redactedData };
      if (p.signature) return { type: 'thinking', thinking: p.text, signature: p.signature };
      return null;
  }
}

function encodeMessages(req: C.Request): W.RequestMessage[] {
  const out: W.RequestMessage[] = [];
  for (const m of req.messages) {
    if (m.role === 'system') {
      // Anthropic's own mid-conversation system messages.
      const text = systemMessageText(m);
      if (text) out.push({ role: 'system', content: text });
      continue;
    }
    let blocks = m.content.map(encodePart).filter((b): b is W.RequestBlock => b !== null);
    // tool_result blocks must open the user turn that answers the tool calls.
    if (m.role === 'user') blocks = [...blocks.filter((b) => b.type === 'tool_result'), ...blocks.filter((b) => b.type !== 'tool_result')];
    if (!blocks.length) continue;
    const prev = out[out.length - 1];
    if (prev && prev.role !== 'system' && prev.role === m.role) prev.content.push(...blocks);
    else out.push({ role: m.role, content: blocks });
  }
  return out;
}

/**
 * Claude 4.6 and later think adaptively, steered by an effort; Opus 4.7 and later refuse fixed
 * budgets (`type: enabled`). Matched on the model id (`claude-opus-4-7`, `claude-sonnet-4.6`, `claude-opus-5`…).
 */
export function thinksAdaptively(model: string): boolean {
  const m = /claude-(?:opus|sonnet|haiku)-(\d+)(?:[-.](\d{1,2})(?!\d))?/.exec(model);
  if (!m) return false;
  const major = Number(m[1]);
  return major > 4 || (major === 4 && Number(m[2] ?? 0) >= 6);
}

/** Canonical effort → Anthropic's (`low` is its lowest; a bare budget is mapped to an effort first). */
function anthropicEffort(r: NonNullable<C.Request['reasoning']>, budget: number): string {
  const effort = r.effort ?? budgetToEffort(budget);
  return effort === 'minimal' || effort === 'none' ? 'low' : effort;
}

export function encodeMessagesBody(req: C.Request, ctx: CallContext): W.Request {
  const body: W.Request = { model: req.model, messages: encodeMessages(req) };
  if (req.system.length) body.system = encodeSystem(req);
  if (req.cacheControl) body.cache_control = req.cacheControl;
  let maxTokens = req.maxTokens ?? ctx.defaultMaxTokens ?? DEFAULT_MAX_TOKENS;
  const tools: W.Tool[] = (req.tools ?? []).map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters ?? { type: 'object' }, ...cacheMark(t.cacheControl) }));
  let toolChoice: W.ToolChoice | undefined;
  if (req.toolChoice !== undefined && tools.length) {
    const tc = req.toolChoice;
    toolChoice = typeof tc === 'object' ? { type: 'tool', name: tc.name } : { type: tc === 'required' ? 'any' : tc };
  } else if (req.toolChoice === 'none') toolChoice = { type: 'none' };
  if (req.parallelToolCalls === false && tools.length) toolChoice = { ...(toolChoice ?? { type: 'auto' }), disable_parallel_tool_use: true };

  const f = req.responseFormat;
  if (f && f.type !== 'text') {
    const schema = f.type === 'json_schema' ? f.schema : { type: 'object' };
    if (!tools.length) {
      tools.push({ name: JSON_TOOL, description: 'Respond with the JSON output.', input_schema: schema });
      toolChoice = { type: 'tool', name: JSON_TOOL };
    } else {
      const instruction = `Answer with a single JSON value only, matching this JSON Schema:\n${JSON.stringify(schema)}`;
      body.system = Array.isArray(body.system) ? [...body.system, { type: 'text', text: instruction }] : [body.system, instruction].filter(Boolean).join('\n\n');
    }
  }
  // Web search runs on Anthropic's side as its server tool.
  if (req.webSearch) tools.push({ type: 'web_search_20250305', name: 'web_search', max_uses: 5 });
  if (tools.length) body.tools = tools;
  if (toolChoice) body.tool_choice = toolChoice;

  const budget = reasoningBudget(req.reasoning);
  // Extended thinking cannot be combined with a forced tool; the forced tool wins.
  const forced = toolChoice?.type === 'tool' || toolChoice?.type === 'any';
  const thinking = budget !== undefined && budget > 0 && !forced;
  if (thinking && thinksAdaptively(req.model)) {
    body.thinking = { type: 'adaptive' };
    body.output_config = { effort: anthropicEffort(req.reasoning!, budget!) };
  } else if (thinking) {
    const b = Math.max(1024, budget!);
    body.thinking = { type: 'enabled', budget_tokens: b };
    maxTokens = b + maxTokens;
  }
  body.max_tokens = maxTokens;
  // Anthropic samples in 0-1 and requires the defaults while thinking.
  if (req.temperature !== undefined && !thinking) body.temperature = Math.min(1, req.temperature);
  if (req.topP !== undefined) body.top_p = req.topP;
  if (req.topK !== undefined && !thinking) body.top_k = req.topK;
  if (req.stop?.length) body.stop_sequences = req.stop;
  if (req.user) body.metadata = { user_id: req.user };
  if (req.stream) body.stream = true;
  return body;
}

export function mapStop(reason: string | null | undefined): C.FinishReason {
  switch (reason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'refusal';
    case 'pause_turn':
      return 'pause';
    default:
      return 'stop';
  }
}

/** One step's counts: its whole prompt (uncached input + cache reads + cache writes) and output. */
function stepCounts(u: W.Usage | W.UsageIteration) {
  const read = whole(u.cache_read_input_tokens);
  const written = whole(u.cache_creation_input_tokens);
  return { input: whole(u.input_tokens) + read + written, output: whole(u.output_tokens), read, written, written1h: u.cache_creation ? reported(u.cache_creation.ephemeral_1h_input_tokens) : undefined };
}

/**
 * Anthropic's usage. `input_tokens` is only the uncached part: the canonical input adds the cache
 * reads and writes. Thinking is inside `output_tokens`; newer answers name it in
 * `output_tokens_details.thinking_tokens`, older ones do not (reasoning 0 there: not a separate
 * price). Searches are `server_tool_use.web_search_requests`. With compaction the top-level counts
 * are the answering step's alone: the compaction step ran on the same model and is billed too, so
 * its iteration is added. An advisor's iteration ran on another model at that model's prices and is
 * not this model's usage: it is left out.
 */
export function decodeUsage(u: W.Usage | null | undefined): C.Usage | null {
  if (!u) return null;
  const steps = [stepCounts(u), ...(u.iterations ?? []).filter((it) => it.type === 'compaction').map(stepCounts)];
  const sum = (of: (s: ReturnType<typeof stepCounts>) => number) => steps.reduce((n, s) => n + of(s), 0);
  const usage: C.Usage = {
    inputTokens: sum((s) => s.input),
    outputTokens: sum((s) => s.output),
    cachedTokens: sum((s) => s.read),
    cacheWriteTokens: sum((s) => s.written),
    reasoningTokens: whole(u.output_tokens_details?.thinking_tokens),
  };
  return clampUsage(
    withReported(usage, {
      cacheWrite1hTokens: steps.some((s) => s.written1h !== undefined) ? sum((s) => s.written1h ?? 0) : undefined,
      webSearchCalls: reported(u.server_tool_use?.web_search_requests),
    }),
  );
}

/**
 * A stream's usage so far: message_delta's counts are cumulative and replace message_start's; a
 * field it leaves out (or sends as null) keeps message_start's value (the 5-minute/1-hour split
 * comes only there).
 */
function mergeUsage(start: W.Usage, delta: W.Usage | undefined): W.Usage {
  // The entries of a W.Usage with a value are a W.Usage.
  const given = Object.fromEntries(Object.entries(delta ?? {}).filter(([, v]) => v !== null && v !== undefined)) as W.Usage;
  return { ...start, ...given };
}

export function decodeMessagesResponse(b: W.Message): C.Response {
  const content: C.Response['content'] = [];
  let jsonTool = false;
  let webSearch = false;
  for (const block of b.content ?? []) {
    if (block.type === 'server_tool_use' && block.name === 'web_search') webSearch = true;
    if (block.type === 'text') {
      const annotations: C.UrlCitation[] = (block.citations ?? []).flatMap((c) =>
        c.type === 'web_search_result_location' && c.url ? [{ url: c.url, title: c.title ?? c.url, start: 0, end: block.text.length }] : [],
      );
      content.push({ type: 'text', text: block.text, ...(annotations.length ? { annotations } : {}) });
    } else if (block.type === 'thinking') content.push({ type: 'reasoning', text: block.thinking ?? '', signature: block.signature });
    else if (block.type === 'redacted_thinking') content.push({ type: 'reasoning', text: '', redactedData: block.data });
    else if (block.type === 'tool_use' && block.name === JSON_TOOL) {
      jsonTool = true;
      content.push({ type: 'text', text: JSON.stringify(block.input) });
    } else if (block.type === 'tool_use') content.push({ type: 'tool_call', id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) });
  }
  const finish = mapStop(b.stop_reason);
  return {
    id: b.id ?? `msg_${randomToken(24)}`,
    model: b.model ?? '',
    content,
    finishReason: jsonTool && finish === 'tool_calls' ? 'stop' : finish,
    stopSequence: b.stop_sequence ?? null,
    usage: decodeUsage(b.usage),
    webSearch,
  };
}

export class MessagesStreamDecoder implements StreamDecoder {
  /** The usage as Anthropic reported it so far (message_start, then merged with message_delta). */
  private usage: W.Usage | null = null;
  private stopped = false;
  private jsonBlock = -1;
  private finish?: C.StreamEvent;
  /** Server-tool blocks (web search) whose deltas are Anthropic's business, not the client's. */
  private readonly serverBlocks = new Set<number>();
  private readonly textLength = new Map<number, number>();

  push(e: { event?: string; data: string }): C.StreamEvent[] {
    return this.pushParsed(JSON.parse(e.data));
  }

  pushParsed(data: unknown): C.StreamEvent[] {
    const ev = asWire<W.StreamEvent>(data);
    switch (ev.type) {
      case 'message_start':
        this.usage = ev.message?.usage ?? null;
        return [{ type: 'start', id: ev.message?.id ?? `msg_${randomToken(24)}`, model: ev.message?.model ?? '' }];
      case 'content_block_start': {
        const b = ev.content_block;
        if (!b) return [];
        if (b.type === 'tool_use' && b.name === JSON_TOOL) {
          this.jsonBlock = ev.index;
          return [];
        }
        if (b.type === 'tool_use') return [{ type: 'tool_call_start', index: ev.index, id: b.id, name: b.name }];
        if (b.type === 'server_tool_use' && b.name === 'web_search') {
          this.serverBlocks.add(ev.index);
          return [{ type: 'web_search' }];
        }
        if (b.type === 'web_search_tool_result') this.serverBlocks.add(ev.index);
        if (b.type === 'redacted_thinking') return [{ type: 'reasoning_redacted', data: b.data }];
        if (b.type === 'text' && b.text) return [{ type: 'text', text: b.text }];
        return [];
      }
      case 'content_block_delta': {
        const d = ev.delta;
        if (!d) return [];
        if (d.type === 'text_delta') {
          this.textLength.set(ev.index, (this.textLength.get(ev.index) ?? 0) + d.text.length);
          return [{ type: 'text', text: d.text }];
        }
        if (d.type === 'input_json_delta') {
          if (this.serverBlocks.has(ev.index)) return [];
          if (ev.index === this.jsonBlock) return d.partial_json ? [{ type: 'text', text: d.partial_json }] : [];
          return d.partial_json ? [{ type: 'tool_call_delta', index: ev.index, arguments: d.partial_json }] : [];
        }
        if (d.type === 'thinking_delta') return [{ type: 'reasoning', text: d.thinking }];
        if (d.type === 'signature_delta') return [{ type: 'reasoning_signature', signature: d.signature }];
        if (d.type === 'citations_delta' && d.citation?.type === 'web_search_result_location' && d.citation.url) {
          const len = this.textLength.get(ev.index) ?? 0;
          return [{ type: 'annotations', annotations: [{ url: d.citation.url, title: d.citation.title ?? d.citation.url, start: 0, end: len }] }];
        }
        return [];
      }
      case 'message_delta': {
        this.usage = mergeUsage(this.usage ?? {}, ev.usage);
        let reason = mapStop(ev.delta?.stop_reason);
        if (reason === 'tool_calls' && this.jsonBlock >= 0) reason = 'stop';
        this.finish = { type: 'finish', reason, stopSequence: ev.delta?.stop_sequence ?? null };
        return [this.finish];
      }
      case 'message_stop':
        this.stopped = true;
        const usage = decodeUsage(this.usage);
        return usage ? [{ type: 'usage', usage }] : [];
      case 'error':
        throw new UpstreamStreamError(ev.error?.message ?? 'upstream stream error', ev.error?.type, ev.error);
      default:
        return [];
    }
  }

  end(): C.StreamEvent[] {
    if (!this.stopped) throw new UpstreamStreamError('the upstream stream ended before message_stop');
    return [];
  }
}

/** What Anthropic's count_tokens takes of a Messages body (it refuses the generation-only fields). */
const COUNTED_FIELDS = ['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking', 'output_config', 'output_format', 'mcp_servers', 'context_management', 'cache_control', 'speed'];

/** `POST /messages/count_tokens` with the generation's body, its counted fields only. */
export const anthropicCounter: TokenCounter = {
  call: (_req, ctx, { http }) => ({
    ...vendorTarget(anthropicClient, ctx.provider, '/messages/count_tokens', ctx.clientHeaders),
    body: pickFields(http.body, COUNTED_FIELDS),
  }),
  read: (answer) => tokenCountOf(asWire<W.TokenCount | null>(answer)?.input_tokens),
};

export const anthropicMessages: TextAdapter = {
  format: 'anthropic',
  // Its web_search server tool (encodeMessagesBody).
  nativeWebSearch: true,
  cacheBreakpoints: true,
  endpoint: (_req, ctx) => vendorTarget(anthropicClient, ctx.provider, '/messages', ctx.clientHeaders),
  body: encodeMessagesBody,
  decode: (body) => decodeMessagesResponse(asWire<W.Message>(body)),
  streamDecoder: () => new MessagesStreamDecoder(),
  counter: anthropicCounter,
};
