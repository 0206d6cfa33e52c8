// The Responses client format: request → canonical, canonical → Response object and typed events.
import type { ResponsesRequest } from '../../contract/responses.ts';
import { randomToken } from '../runtime/secrets.ts';
import { errors, type GatewayError } from '../runtime/errors.ts';
import { parseImageUrl } from './chat.ts';
import type * as C from './canonical.ts';
import { RESPONSES_FIELDS, droppedFields } from './request-fields.ts';

type Json = Record<string, any>;

/**
 * Where the output items of translated answers go, so that a client sending them back as
 * `item_reference` can be served without OpenAI's response storage (the item store, stores/items.ts).
 */
export type RememberItems = (items: Json[]) => void;

/** The kinds of output item this gateway makes, by their ids' prefix: messages, reasoning, function calls. */
const ITEM_PREFIXES = ['msg', 'rs', 'fc'] as const;
const ITEM_ID_CHARS = 40;
/** An id `itemId` made for an output item: only those are worth looking up. */
const GENERATED_ITEM_ID = new RegExp(`^(${ITEM_PREFIXES.join('|')})_[0-9A-Za-z]{${ITEM_ID_CHARS}}$`);

/**
 * The ids of the `item_reference` items in a request's input that this gateway may have generated,
 * once each, to look up before decoding it (others, such as OpenAI's own, are never in the store).
 */
export function itemReferenceIds(body: ResponsesRequest): string[] {
  if (typeof body.input === 'string') return [];
  const ids = new Set<string>();
  for (const item of body.input as Json[]) if (item.type === 'item_reference' && typeof item.id === 'string' && GENERATED_ITEM_ID.test(item.id)) ids.add(item.id);
  return [...ids];
}

export const WEB_SEARCH_TOOLS = new Set(['web_search', 'web_search_preview', 'web_search_2025_08_26', 'web_search_preview_2025_03_11']);

/**
 * Reasoning state from other providers travels in a reasoning item's `encrypted_content`:
 * `mg1:a:<signature>` signed Anthropic thinking (its text in `summary`), `mg1:r:<data>` redacted
 * thinking, `mg1:g:<signature>` a Gemini thought signature for the function call that follows.
 */
const ENC = { anthropic: 'mg1:a:', redacted: 'mg1:r:', gemini: 'mg1:g:' };

/**
 * `nativeOnly`: the request uses something only OpenAI's own Responses API has (stored responses,
 * file ids); it can go to OpenAI upstreams only, and fails with this error for the others.
 */
export type ResponsesDecoded = { request: C.Request; builtIns: string[]; nativeOnly: GatewayError | null };

function contentParts(content: string | Json[], at: string, nativeOnly: (e: GatewayError) => void): C.Part[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.flatMap((p, j): C.Part[] => {
    switch (p.type) {
      case 'input_text':
      case 'output_text':
        return [{ type: 'text', text: p.text }];
      case 'refusal':
        return [{ type: 'text', text: p.refusal }];
      case 'input_image':
        if (!p.image_url) {
          nativeOnly(errors.invalid('Image file ids can only be sent to OpenAI models.', `${at}[${j}].file_id`));
          return [];
        }
        return [{ type: 'image', source: parseImageUrl(p.image_url, `${at}[${j}].image_url`), detail: p.detail }];
      default:
        nativeOnly(errors.invalid(`Content of type '${p.type}' can only be sent to OpenAI models.`, `${at}[${j}].type`));
        return [];
    }
  });
}

/** `referenced`: the items of the input's `item_reference`s that the item store still has. */
export function responsesToCanonical(body: ResponsesRequest, referenced: ReadonlyMap<string, Json>): ResponsesDecoded {
  let nativeOnly: GatewayError | null = null;
  const needsNative = (e: GatewayError) => void (nativeOnly ??= e);
  const system: string[] = body.instructions ? [body.instructions] : [];
  const messages: C.Message[] = [];
  const push = (role: C.Message['role'], parts: C.Part[]) => {
    const prev = messages[messages.length - 1];
    if (prev && prev.role === role) prev.content.push(...parts);
    else messages.push({ role, content: parts });
  };
  const names = new Map<string, string>();
  let pendingSignature: string | undefined;
  if (typeof body.input === 'string') push('user', [{ type: 'text', text: body.input }]);
  else {
    body.input.forEach((raw, i) => {
      let item = raw as Json;
      const at = `input[${i}]`;
      if (item.type === 'item_reference') item = referenced.get(item.id) ?? item;
      if (item.type === undefined || item.type === 'message') {
        if (item.role === 'system' || item.role === 'developer') {
          system.push(contentParts(item.content, `${at}.content`, needsNative).map((p) => (p.type === 'text' ? p.text : '')).join(''));
        } else push(item.role === 'assistant' ? 'assistant' : 'user', contentParts(item.content, `${at}.content`, needsNative));
      } else if (item.type === 'function_call') {
        names.set(item.call_id, item.name);
        push('assistant', [{ type: 'tool_call', id: item.call_id, name: item.name, arguments: item.arguments, thoughtSignature: pendingSignature }]);
        pendingSignature = undefined;
      } else if (item.type === 'function_call_output') {
        const text = typeof item.output === 'string' ? item.output : (item.output as Json[]).map((o) => o.text ?? '').join('');
        push('user', [{ type: 'tool_result', toolCallId: item.call_id, name: names.get(item.call_id), content: [{ type: 'text', text }] }]);
      } else if (item.type === 'reasoning') {
        const enc: string = item.encrypted_content ?? '';
        const text = (item.summary ?? []).map((s: Json) => s.text).join('');
        if (enc.startsWith(ENC.gemini)) pendingSignature = enc.slice(ENC.gemini.length);
        else if (enc.startsWith(ENC.redacted)) push('assistant', [{ type: 'reasoning', text: '', redactedData: enc.slice(ENC.redacted.length) }]);
        else push('assistant', [{ type: 'reasoning', text, signature: enc.startsWith(ENC.anthropic) ? enc.slice(ENC.anthropic.length) : undefined }]);
      } else if (item.type === 'item_reference') {
        needsNative(errors.invalid(`Item reference ${item.id} is not an item this gateway generated recently; item references to stored responses need an OpenAI model.`, `${at}.id`));
      }
      // Other items (earlier built-in tool calls and their results) carry nothing another provider can use.
    });
  }
  const builtIns: string[] = [];
  const tools: C.Tool[] = [];
  for (const t of (body.tools ?? []) as Json[]) {
    if (t.type === 'function') tools.push({ name: t.name, description: t.description ?? undefined, parameters: t.parameters ?? { type: 'object', properties: {} } });
    else builtIns.push(t.type);
  }
  const tc = body.tool_choice as Json | string | undefined;
  const f = body.text?.format as Json | undefined;
  const dropped = droppedFields(body, RESPONSES_FIELDS);
  const request: C.Request = {
    model: body.model,
    system,
    messages,
    tools: tools.length ? tools : undefined,
    toolChoice: tc === undefined ? undefined : typeof tc === 'string' ? (tc as C.ToolChoice) : tc.type === 'function' ? { name: tc.name } : 'auto',
    parallelToolCalls: body.parallel_tool_calls,
    maxTokens: body.max_output_tokens,
    temperature: body.temperature,
    topP: body.top_p,
    reasoning: body.reasoning?.effort ? { effort: body.reasoning.effort } : undefined,
    responseFormat:
      f?.type === 'json_schema'
        ? { type: 'json_schema', name: f.name, schema: f.schema, strict: f.strict ?? undefined, description: f.description, param: 'text.format' }
        : f
          ? { type: f.type, param: 'text.format' }
          : undefined,
    stream: body.stream === true,
    webSearch: builtIns.some((b) => WEB_SEARCH_TOOLS.has(b)),
    ...(dropped.untranslated.length ? { untranslated: dropped.untranslated } : {}),
    ...(dropped.unknown.length ? { unknownFields: dropped.unknown } : {}),
  };
  if (body.previous_response_id) needsNative(errors.invalid('previous_response_id needs stored responses, which only OpenAI models have; send the conversation in `input`.', 'previous_response_id'));
  return { request, builtIns, nativeOnly };
}

export function responsesUsage(u: C.Usage | null): Json | null {
  if (!u) return null;
  return {
    input_tokens: u.inputTokens,
    input_tokens_details: { cached_tokens: u.cachedTokens },
    output_tokens: u.outputTokens,
    output_tokens_details: { reasoning_tokens: u.reasoningTokens },
    total_tokens: u.inputTokens + u.outputTokens,
  };
}

const itemId = (prefix: (typeof ITEM_PREFIXES)[number] | 'resp') => `${prefix}_${randomToken(ITEM_ID_CHARS)}`;

function reasoningItem(p: C.ReasoningPart, id = itemId('rs')): Json {
  const item: Json = { id, type: 'reasoning', summary: p.text ? [{ type: 'summary_text', text: p.text }] : [] };
  if (p.redactedData) item.encrypted_content = ENC.redacted + p.redactedData;
  else if (p.signature) item.encrypted_content = ENC.anthropic + p.signature;
  return item;
}

function outputText(p: C.TextPart): Json {
  return {
    type: 'output_text',
    text: p.text,
    annotations: (p.annotations ?? []).map((a) => ({ type: 'url_citation', url: a.url, title: a.title, start_index: a.start, end_index: a.end })),
    logprobs: [],
  };
}

/** Finished output items, one message item for consecutive text. */
export function outputItems(content: C.Response['content']): Json[] {
  const out: Json[] = [];
  for (const p of content) {
    const last = out[out.length - 1];
    if (p.type === 'text') {
      if (last?.type === 'message') last.content.push(outputText(p));
      else out.push({ id: itemId('msg'), type: 'message', status: 'completed', role: 'assistant', content: [outputText(p)] });
    } else if (p.type === 'reasoning') out.push(reasoningItem(p));
    else {
      if (p.thoughtSignature) out.push({ id: itemId('rs'), type: 'reasoning', summary: [], encrypted_content: ENC.gemini + p.thoughtSignature });
      out.push({ id: itemId('fc'), type: 'function_call', status: 'completed', call_id: p.id, name: p.name, arguments: p.arguments || '{}' });
    }
  }
  return out;
}

function statusOf(r: C.FinishReason): { status: string; incomplete_details: Json | null } {
  if (r === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (r === 'content_filter' || r === 'refusal') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

/** The response object's echo of the request's settings. */
export function responseShell(id: string, model: string, raw: Json, createdAt: number): Json {
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status: 'in_progress',
    error: null,
    incomplete_details: null,
    instructions: raw.instructions ?? null,
    max_output_tokens: raw.max_output_tokens ?? null,
    model,
    output: [],
    parallel_tool_calls: raw.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: raw.reasoning?.effort ?? null, summary: raw.reasoning?.summary ?? null },
    store: false,
    temperature: raw.temperature ?? null,
    text: { format: raw.text?.format ?? { type: 'text' } },
    tool_choice: raw.tool_choice ?? 'auto',
    tools: raw.tools ?? [],
    top_p: raw.top_p ?? null,
    truncation: 'disabled',
    usage: null,
    metadata: {},
  };
}

export function canonicalToResponse(r: C.Response, model: string, raw: Json, remember: RememberItems): Json {
  const output = outputItems(r.content);
  remember(output);
  return {
    ...responseShell(itemId('resp'), model, raw, Math.floor(Date.now() / 1000)),
    ...statusOf(r.finishReason),
    output,
    usage: responsesUsage(r.usage),
  };
}

export const responsesSse = (data: Json) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;

type Open =
  | { kind: 'message'; index: number; id: string; text: string; annotations: C.UrlCitation[] }
  | { kind: 'reasoning'; index: number; id: string; text: string; signature?: string }
  | { kind: 'function_call'; index: number; id: string; callId: string; name: string; args: string; toolIndex: number };

/**
 * Canonical events → the typed Responses event sequence with sequence numbers and
 * output/content indices, ending in response.completed / .incomplete / .failed.
 */
export class ResponsesStreamEncoder {
  private seq = 0;
  private readonly shell: Json;
  private started = false;
  private open: Open | null = null;
  private readonly items: Json[] = [];
  private finish: C.FinishReason = 'stop';
  private usage: C.Usage | null = null;
  private pendingSignature: string | undefined;

  constructor(
    model: string,
    raw: Json,
    private readonly remember: RememberItems,
  ) {
    this.shell = responseShell(itemId('resp'), model, raw, Math.floor(Date.now() / 1000));
  }

  private ev(data: Json): string {
    return responsesSse({ ...data, sequence_number: this.seq++ });
  }

  private start(): string {
    if (this.started) return '';
    this.started = true;
    return this.ev({ type: 'response.created', response: this.shell }) + this.ev({ type: 'response.in_progress', response: this.shell });
  }

  private close(): string {
    const o = this.open;
    if (!o) return '';
    this.open = null;
    let out = '';
    let item: Json;
    if (o.kind === 'message') {
      const part = outputText({ type: 'text', text: o.text, annotations: o.annotations });
      out += this.ev({ type: 'response.output_text.done', item_id: o.id, output_index: o.index, content_index: 0, text: o.text, logprobs: [] });
      out += this.ev({ type: 'response.content_part.done', item_id: o.id, output_index: o.index, content_index: 0, part });
      item = { id: o.id, type: 'message', status: 'completed', role: 'assistant', content: [part] };
    } else if (o.kind === 'reasoning') {
      if (o.text) {
        out += this.ev({ type: 'response.reasoning_summary_text.done', item_id: o.id, output_index: o.index, summary_index: 0, text: o.text });
        out += this.ev({ type: 'response.reasoning_summary_part.done', item_id: o.id, output_index: o.index, summary_index: 0, part: { type: 'summary_text', text: o.text } });
      }
      item = reasoningItem({ type: 'reasoning', text: o.text, signature: o.signature }, o.id);
    } else {
      const args = o.args || '{}';
      out += this.ev({ type: 'response.function_call_arguments.done', item_id: o.id, output_index: o.index, arguments: args, name: o.name });
      item = { id: o.id, type: 'function_call', status: 'completed', call_id: o.callId, name: o.name, arguments: args };
    }
    this.items.push(item);
    return out + this.ev({ type: 'response.output_item.done', output_index: o.index, item });
  }

  private openItem(o: Open, item: Json): string {
    const out = this.close();
    this.open = o;
    return out + this.ev({ type: 'response.output_item.added', output_index: o.index, item });
  }

  push(e: C.StreamEvent): string {
    let out = this.start();
    const index = this.items.length + (this.open ? 1 : 0);
    switch (e.type) {
      case 'text': {
        if (!e.text) return out;
        if (this.open?.kind !== 'message') {
          const id = itemId('msg');
          out += this.openItem({ kind: 'message', index, id, text: '', annotations: [] }, { id, type: 'message', status: 'in_progress', role: 'assistant', content: [] });
          out += this.ev({ type: 'response.content_part.added', item_id: id, output_index: index, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } });
        }
        const o = this.open as Open & { kind: 'message' };
        o.text += e.text;
        return out + this.ev({ type: 'response.output_text.delta', item_id: o.id, output_index: o.index, content_index: 0, delta: e.text, logprobs: [] });
      }
      case 'reasoning': {
        if (this.open?.kind !== 'reasoning' || this.open.signature) {
          const id = itemId('rs');
          out += this.openItem({ kind: 'reasoning', index, id, text: '' }, { id, type: 'reasoning', summary: [] });
          out += this.ev({ type: 'response.reasoning_summary_part.added', item_id: id, output_index: index, summary_index: 0, part: { type: 'summary_text', text: '' } });
        }
        const o = this.open as Open & { kind: 'reasoning' };
        o.text += e.text;
        return out + this.ev({ type: 'response.reasoning_summary_text.delta', item_id: o.id, output_index: o.index, summary_index: 0, delta: e.text });
      }
      case 'reasoning_signature':
        if (this.open?.kind === 'reasoning') {
          this.open.signature = e.signature;
          return out + this.close();
        }
        return out;
      case 'reasoning_redacted': {
        const id = itemId('rs');
        out += this.openItem({ kind: 'reasoning', index, id, text: '' }, { id, type: 'reasoning', summary: [] });
        (this.open as Open & { kind: 'reasoning' }).signature = undefined;
        this.open = null;
        const item = reasoningItem({ type: 'reasoning', text: '', redactedData: e.data }, id);
        this.items.push(item);
        return out + this.ev({ type: 'response.output_item.done', output_index: index, item });
      }
      case 'tool_call_start': {
        out += this.close();
        let at = this.items.length;
        if (e.thoughtSignature) {
          const item = { id: itemId('rs'), type: 'reasoning', summary: [], encrypted_content: ENC.gemini + e.thoughtSignature };
          out += this.ev({ type: 'response.output_item.added', output_index: at, item: { ...item } });
          this.items.push(item);
          out += this.ev({ type: 'response.output_item.done', output_index: at, item });
          at++;
        }
        const id = itemId('fc');
        return out + this.openItem({ kind: 'function_call', index: at, id, callId: e.id, name: e.name, args: '', toolIndex: e.index }, { id, type: 'function_call', status: 'in_progress', call_id: e.id, name: e.name, arguments: '' });
      }
      case 'tool_call_delta': {
        const o = this.open;
        if (o?.kind !== 'function_call' || o.toolIndex !== e.index || !e.arguments) return out;
        o.args += e.arguments;
        return out + this.ev({ type: 'response.function_call_arguments.delta', item_id: o.id, output_index: o.index, delta: e.arguments });
      }
      case 'annotations':
        if (this.open?.kind === 'message') this.open.annotations.push(...e.annotations);
        return out;
      case 'finish':
        this.finish = e.reason;
        return out;
      case 'usage':
        this.usage = e.usage;
        return out;
      default:
        return out;
    }
  }

  end(): string {
    const out = this.start() + this.close();
    this.remember(this.items);
    const response = { ...this.shell, ...statusOf(this.finish), output: this.items, usage: responsesUsage(this.usage) };
    return out + this.ev({ type: response.status === 'completed' ? 'response.completed' : 'response.incomplete', response });
  }

  fail(err: GatewayError): string {
    const out = this.start();
    const e = err.toBody().error;
    const response = { ...this.shell, status: 'failed', error: { code: e.code, message: e.message }, output: this.items, usage: responsesUsage(this.usage) };
    return out + this.ev({ type: 'error', code: e.code, message: e.message, param: e.param ?? null, error: e }) + this.ev({ type: 'response.failed', response });
  }

  /** The next sequence number, for frames written around the encoder. */
  get nextSequence(): number {
    return this.seq;
  }
}
