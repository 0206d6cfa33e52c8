// The Responses client format: request → canonical, canonical → Response object and typed events.
import type { z } from 'zod';
import type { ResponseObject, ResponsesOutputItem, ResponsesRequest, ResponsesStreamEvent, ResponsesUsage } from '../../contract/responses.ts';
import { randomToken } from '../runtime/secrets.ts';
import { errors, type GatewayError } from '../runtime/errors.ts';
import { dataUrlOf, parseImageUrl } from './chat.ts';
import type * as C from './canonical.ts';
import { affinityHintOf } from './canonical.ts';
import { RESPONSES_FIELDS, droppedFields } from './request-fields.ts';
import { cacheControlOf, withCacheControl } from './cache-hints.ts';

type InputItem = Exclude<ResponsesRequest['input'], string>[number];
type MessageItem = Extract<InputItem, { role: string }>;
type InputTool = NonNullable<ResponsesRequest['tools']>[number];

/**
 * Narrows an input item to the described item of `type`. The contract's catch-all item (built-in
 * tool calls, item references) never has a described type: its regex refuses those.
 */
const isItem = <T extends 'function_call' | 'function_call_output' | 'reasoning'>(item: InputItem, type: T): item is Extract<InputItem, { type: T }> =>
  item.type === type;
/** A message item: `type` is optional for messages only. */
const isMessage = (item: InputItem): item is MessageItem => item.type === undefined || item.type === 'message';
/** A function tool (built-in tools' types are never `function`: the contract's regex refuses it). */
const isFunctionTool = (t: InputTool): t is Extract<InputTool, { type: 'function' }> => t.type === 'function';

/** The output items this gateway writes: the contract's, with the fields it always sets. */
type ContractItem = z.infer<typeof ResponsesOutputItem>;
type UrlCitation = { type: 'url_citation'; url: string; title: string; start_index: number; end_index: number };
type OutputText = Extract<Extract<ContractItem, { type: 'message' }>['content'][number], { type: 'output_text' }> & { annotations: UrlCitation[]; logprobs: [] };
type MessageOut = Extract<ContractItem, { type: 'message' }> & { status: 'in_progress' | 'completed'; content: OutputText[] };
type ReasoningOut = Extract<ContractItem, { type: 'reasoning' }> & { id: string; summary: { type: 'summary_text'; text: string }[]; encrypted_content?: string };
type FunctionCallOut = Extract<ContractItem, { type: 'function_call' }> & { status: 'in_progress' | 'completed' };
export type OutputItem = MessageOut | ReasoningOut | FunctionCallOut;

/**
 * Where the output items of translated answers go, so that a client sending them back as
 * `item_reference` can be served without OpenAI's response storage (the item store, stores/items.ts).
 */
export type RememberItems = (items: OutputItem[]) => void;

/**
 * An item the store gave back: one `RememberItems` was given (the store types items as records).
 * Output items are input items: sent back, they decode as their `item_reference` would.
 */
const rememberedItem = (item: Record<string, unknown> | undefined) => item as OutputItem | undefined;

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
  for (const item of body.input) if (item.type === 'item_reference' && typeof item.id === 'string' && GENERATED_ITEM_ID.test(item.id)) ids.add(item.id);
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

/**
 * What the hold needs of a file part only OpenAI models read (pipeline/estimate.ts): its media type
 * and, inline (a data URL), its bytes.
 */
function opaqueFile(p: Record<string, unknown>): C.OpaqueInput {
  const inline = dataUrlOf(typeof p.file_data === 'string' ? p.file_data : '');
  return inline ? { kind: 'media', ...inline } : { kind: 'media' };
}

/** An image by URL or data URL, as an image source. */
function imageAt(url: string): C.ImageSource {
  const inline = dataUrlOf(url);
  return inline ? { kind: 'base64', ...inline } : { kind: 'url', url };
}

function contentParts(content: MessageItem['content'], at: string, nativeOnly: (e: GatewayError) => void, opaque: C.OpaqueInput[]): C.Part[] {
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
          opaque.push({ kind: 'image', source: null, ...(p.detail !== undefined ? { detail: p.detail } : {}) });
          return [];
        }
        return [{ type: 'image', source: parseImageUrl(p.image_url, `${at}[${j}].image_url`), detail: p.detail }];
      default:
        nativeOnly(errors.invalid(`Content of type '${p.type}' can only be sent to OpenAI models.`, `${at}[${j}].type`));
        opaque.push(opaqueFile(p));
        return [];
    }
  });
}

/**
 * What the hold needs of an input item only OpenAI models read (an earlier built-in tool's call or
 * result): a computer screenshot as an image, anything else as the length of its JSON, read as text.
 */
function opaqueItem(item: Record<string, unknown>): C.OpaqueInput {
  const output = item.output as Record<string, unknown> | undefined;
  if (item.type === 'computer_call_output' && typeof output?.image_url === 'string') return { kind: 'image', source: imageAt(output.image_url) };
  if (item.type === 'computer_call_output') return { kind: 'image', source: null };
  return { kind: 'text', chars: JSON.stringify(item).length };
}

/** An image in a function's output, for the hold: by its data URL or URL, else (a file id) of unknown size. */
function imageOutput(o: Record<string, unknown>): C.OpaqueInput {
  const url = typeof o.image_url === 'string' ? o.image_url : null;
  const detail = typeof o.detail === 'string' ? { detail: o.detail } : {};
  return { kind: 'image', source: url ? imageAt(url) : null, ...detail };
}

/** `referenced`: the items of the input's `item_reference`s that the item store still has. */
export function responsesToCanonical(body: ResponsesRequest, referenced: ReadonlyMap<string, Record<string, unknown>>): ResponsesDecoded {
  let nativeOnly: GatewayError | null = null;
  const needsNative = (e: GatewayError) => void (nativeOnly ??= e);
  const opaque: C.OpaqueInput[] = [];
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
    body.input.forEach((sent, i) => {
      let item: InputItem = sent;
      const at = `input[${i}]`;
      if (item.type === 'item_reference') item = (typeof item.id === 'string' ? rememberedItem(referenced.get(item.id)) : undefined) ?? item;
      if (isMessage(item)) {
        if (item.role === 'system' || item.role === 'developer') {
          const parts = contentParts(item.content, `${at}.content`, needsNative, opaque);
          system.push(parts.map((p) => (p.type === 'text' ? p.text : '')).join(''));
          // Images in instructions reach OpenAI models only (passed through); the hold counts them.
          for (const p of parts) if (p.type === 'image') opaque.push({ kind: 'image', source: p.source, ...(p.detail !== undefined ? { detail: p.detail } : {}) });
        } else push(item.role === 'assistant' ? 'assistant' : 'user', contentParts(item.content, `${at}.content`, needsNative, opaque));
      } else if (isItem(item, 'function_call')) {
        names.set(item.call_id, item.name);
        push('assistant', [{ type: 'tool_call', id: item.call_id, name: item.name, arguments: item.arguments, thoughtSignature: pendingSignature }]);
        pendingSignature = undefined;
      } else if (isItem(item, 'function_call_output')) {
        // An output part's `text` is not in the contract: joined as it is (join writes null and undefined as '').
        const text = typeof item.output === 'string' ? item.output : item.output.map((o) => o.text ?? '').join('');
        // Images and files among the output reach OpenAI models only (passed through); the hold counts them.
        if (typeof item.output !== 'string') for (const o of item.output) if (o.type !== 'input_text' && o.type !== 'output_text') opaque.push(o.type === 'input_image' ? imageOutput(o) : opaqueFile(o));
        push('user', [{ type: 'tool_result', toolCallId: item.call_id, name: names.get(item.call_id), content: [{ type: 'text', text }] }]);
      } else if (isItem(item, 'reasoning')) {
        const enc = item.encrypted_content ?? '';
        const text = (item.summary ?? []).map((s) => s.text).join('');
        if (enc.startsWith(ENC.gemini)) pendingSignature = enc.slice(ENC.gemini.length);
        else if (enc.startsWith(ENC.redacted)) push('assistant', [{ type: 'reasoning', text: '', redactedData: enc.slice(ENC.redacted.length) }]);
        else push('assistant', [{ type: 'reasoning', text, signature: enc.startsWith(ENC.anthropic) ? enc.slice(ENC.anthropic.length) : undefined }]);
      } else if (item.type === 'item_reference') {
        needsNative(errors.invalid(`Item reference ${item.id} is not an item this gateway generated recently; item references to stored responses need an OpenAI model.`, `${at}.id`));
        opaque.push({ kind: 'stored', what: 'item_reference' });
      }
      // Other items (earlier built-in tool calls and their results) carry nothing another provider
      // can use; OpenAI models get them, passed through, and bill them as input.
      else opaque.push(opaqueItem(item));
    });
  }
  const builtIns: string[] = [];
  const tools: C.Tool[] = [];
  for (const t of body.tools ?? []) {
    if (isFunctionTool(t)) tools.push({ name: t.name, description: t.description ?? undefined, parameters: t.parameters ?? { type: 'object', properties: {} } });
    else builtIns.push(t.type);
  }
  const tc = body.tool_choice;
  const f = body.text?.format;
  const dropped = droppedFields(body, RESPONSES_FIELDS);
  const request: C.Request = {
    model: body.model,
    system,
    // OpenRouter's request-wide breakpoint (OpenAI's Responses has none: it caches on its own).
    ...withCacheControl(cacheControlOf(body.cache_control)),
    messages,
    tools: tools.length ? tools : undefined,
    // The contract's catch-all choice also takes `{type: 'function'}` without a name: `name` is then
    // undefined, as it always was (the upstream refuses it); the cast keeps that.
    toolChoice: tc === undefined ? undefined : typeof tc === 'string' ? tc : tc.type === 'function' ? { name: tc.name as string } : 'auto',
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
    affinityHint: affinityHintOf(body),
    webSearch: builtIns.some((b) => WEB_SEARCH_TOOLS.has(b)),
    ...(dropped.untranslated.length ? { untranslated: dropped.untranslated } : {}),
    ...(dropped.unknown.length ? { unknownFields: dropped.unknown } : {}),
  };
  if (body.previous_response_id) needsNative(errors.invalid('previous_response_id needs stored responses, which only OpenAI models have; send the conversation in `input`.', 'previous_response_id'));
  // Content OpenAI keeps and bills as input (a stored response's conversation, a conversation's
  // items, a prompt template, remote MCP tool listings): its size is unknown here.
  const sent = body as Record<string, unknown>;
  for (const what of ['previous_response_id', 'conversation', 'prompt'] as const) if (sent[what] != null) opaque.push({ kind: 'stored', what });
  if (body.tools?.some((t) => t.type === 'mcp')) opaque.push({ kind: 'stored', what: 'mcp' });
  if (opaque.length) request.opaque = opaque;
  return { request, builtIns, nativeOnly };
}

/** Canonical usage in the Responses shape: the details are parts of their totals; no field for audio, images or searches. */
export function responsesUsage(u: C.Usage | null): z.infer<typeof ResponsesUsage> | null {
  if (!u) return null;
  return {
    input_tokens: u.inputTokens,
    input_tokens_details: { cached_tokens: u.cachedTokens, cache_write_tokens: u.cacheWriteTokens },
    output_tokens: u.outputTokens,
    output_tokens_details: { reasoning_tokens: u.reasoningTokens },
    total_tokens: u.inputTokens + u.outputTokens,
  };
}

const itemId = (prefix: (typeof ITEM_PREFIXES)[number] | 'resp') => `${prefix}_${randomToken(ITEM_ID_CHARS)}`;

function reasoningItem(p: C.ReasoningPart, id = itemId('rs')): ReasoningOut {
  const item: ReasoningOut = { id, type: 'reasoning', summary: p.text ? [{ type: 'summary_text', text: p.text }] : [] };
  if (p.redactedData) item.encrypted_content = ENC.redacted + p.redactedData;
  else if (p.signature) item.encrypted_content = ENC.anthropic + p.signature;
  return item;
}

function outputText(p: C.TextPart): OutputText {
  return {
    type: 'output_text',
    text: p.text,
    annotations: (p.annotations ?? []).map((a) => ({ type: 'url_citation', url: a.url, title: a.title, start_index: a.start, end_index: a.end })),
    logprobs: [],
  };
}

/** Finished output items, one message item for consecutive text. */
export function outputItems(content: C.Response['content']): OutputItem[] {
  const out: OutputItem[] = [];
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

type Outcome = { status: 'completed' | 'incomplete'; incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null };

function statusOf(r: C.FinishReason): Outcome {
  if (r === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (r === 'content_filter' || r === 'refusal') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

/** The request's settings a response object echoes. */
type Settings = Pick<ResponsesRequest, 'instructions' | 'max_output_tokens' | 'parallel_tool_calls' | 'reasoning' | 'temperature' | 'text' | 'tool_choice' | 'tools' | 'top_p'>;
type SentReasoning = NonNullable<ResponsesRequest['reasoning']>;

/** The response object this gateway writes: the contract's, with the echo of the request's settings. */
type ResponseOut = z.infer<typeof ResponseObject> & {
  instructions: string | null;
  max_output_tokens: number | null;
  output: OutputItem[];
  parallel_tool_calls: boolean;
  previous_response_id: null;
  reasoning: { effort: NonNullable<SentReasoning['effort']> | null; summary: NonNullable<SentReasoning['summary']> | null };
  store: false;
  temperature: number | null;
  text: { format: NonNullable<NonNullable<ResponsesRequest['text']>['format']> };
  tool_choice: NonNullable<ResponsesRequest['tool_choice']>;
  tools: NonNullable<ResponsesRequest['tools']>;
  top_p: number | null;
  truncation: 'disabled';
  usage: z.infer<typeof ResponsesUsage> | null;
  metadata: Record<string, never>;
};

/** The response object's echo of the request's settings. */
export function responseShell(id: string, model: string, raw: Settings, createdAt: number): ResponseOut {
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

export function canonicalToResponse(r: C.Response, model: string, raw: Settings, remember: RememberItems): ResponseOut {
  const output = outputItems(r.content);
  remember(output);
  return {
    ...responseShell(itemId('resp'), model, raw, Math.floor(Date.now() / 1000)),
    ...statusOf(r.finishReason),
    output,
    usage: responsesUsage(r.usage),
  };
}

/** One SSE frame (the stream encoder's events are ResponsesStreamEvents; frames written around it only need a type). */
export const responsesSse = (data: { type: string; [field: string]: unknown }) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;

type StreamEvent = z.infer<typeof ResponsesStreamEvent>;
/** An event before its sequence number, which the encoder adds. */
type Unnumbered<E> = E extends unknown ? { [K in keyof E as K extends 'sequence_number' ? never : K]: E[K] } : never;

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
  private readonly shell: ResponseOut;
  private started = false;
  private open: Open | null = null;
  private readonly items: OutputItem[] = [];
  private finish: C.FinishReason = 'stop';
  private usage: C.Usage | null = null;
  private pendingSignature: string | undefined;

  constructor(
    model: string,
    raw: Settings,
    private readonly remember: RememberItems,
  ) {
    this.shell = responseShell(itemId('resp'), model, raw, Math.floor(Date.now() / 1000));
  }

  private ev(data: Unnumbered<StreamEvent>): string {
    const event: StreamEvent = { ...data, sequence_number: this.seq++ };
    return responsesSse(event);
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
    let item: OutputItem;
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

  private openItem(o: Open, item: OutputItem): string {
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
        let o = this.open;
        if (o?.kind !== 'message') {
          const id = itemId('msg');
          o = { kind: 'message', index, id, text: '', annotations: [] };
          out += this.openItem(o, { id, type: 'message', status: 'in_progress', role: 'assistant', content: [] });
          out += this.ev({ type: 'response.content_part.added', item_id: id, output_index: index, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } });
        }
        o.text += e.text;
        return out + this.ev({ type: 'response.output_text.delta', item_id: o.id, output_index: o.index, content_index: 0, delta: e.text, logprobs: [] });
      }
      case 'reasoning': {
        let o = this.open;
        if (o?.kind !== 'reasoning' || o.signature) {
          const id = itemId('rs');
          o = { kind: 'reasoning', index, id, text: '' };
          out += this.openItem(o, { id, type: 'reasoning', summary: [] });
          out += this.ev({ type: 'response.reasoning_summary_part.added', item_id: id, output_index: index, summary_index: 0, part: { type: 'summary_text', text: '' } });
        }
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
        this.open = null;
        const item = reasoningItem({ type: 'reasoning', text: '', redactedData: e.data }, id);
        this.items.push(item);
        return out + this.ev({ type: 'response.output_item.done', output_index: index, item });
      }
      case 'tool_call_start': {
        out += this.close();
        let at = this.items.length;
        if (e.thoughtSignature) {
          const item: ReasoningOut = { id: itemId('rs'), type: 'reasoning', summary: [], encrypted_content: ENC.gemini + e.thoughtSignature };
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
    const response: ResponseOut = { ...this.shell, ...statusOf(this.finish), output: this.items, usage: responsesUsage(this.usage) };
    return out + this.ev({ type: response.status === 'completed' ? 'response.completed' : 'response.incomplete', response });
  }

  fail(err: GatewayError): string {
    const out = this.start();
    const e = err.toBody().error;
    const response: ResponseOut = { ...this.shell, status: 'failed', error: { code: e.code, message: e.message }, output: this.items, usage: responsesUsage(this.usage) };
    return out + this.ev({ type: 'error', code: e.code, message: e.message, param: e.param ?? null, error: e }) + this.ev({ type: 'response.failed', response });
  }

  /** The next sequence number, for frames written around the encoder. */
  get nextSequence(): number {
    return this.seq;
  }
}
