// The hub every text format translates through (decision 0002): client formats (chat completions,
// Messages) decode into it, provider formats (OpenAI chat, Anthropic, Gemini) encode from it, and
// responses and stream events come back the same way. N formats need 2N converters, not N².
import type { UnknownField } from './request-fields.ts';

export type ImageSource = { kind: 'url'; url: string } | { kind: 'base64'; mediaType: string; data: string };

/**
 * A prompt-cache breakpoint (Anthropic's `cache_control`, also sent by OpenRouter-style chat
 * clients): the prompt up to and including the marked block is cached, for `ttl` (`5m`, the
 * default, or `1h`). Only Anthropic upstreams take it (docs/translation.md, caching hints).
 */
export type CacheControl = { type: 'ephemeral'; ttl?: string };

/** Opaque reasoning state a provider needs back on the next turn. */
export type ReasoningPart = {
  type: 'reasoning';
  text: string;
  /** Anthropic thinking signature. */
  signature?: string;
  /** Anthropic redacted_thinking data. */
  redactedData?: string;
};

export type ToolCallPart = {
  type: 'tool_call';
  id: string;
  name: string;
  /** JSON text of the arguments (OpenAI keeps a string; Anthropic/Gemini an object). */
  arguments: string;
  /** Gemini thought signature attached to the functionCall part. */
  thoughtSignature?: string;
};

export type ToolResultPart = {
  type: 'tool_result';
  toolCallId: string;
  /** Gemini matches results by function name. */
  name?: string;
  content: (TextPart | ImagePart)[];
  isError?: boolean;
  cacheControl?: CacheControl;
};

/** A web source for a span of one text part (offsets within that part's text). */
export type UrlCitation = { url: string; title: string; start: number; end: number };
export type TextPart = { type: 'text'; text: string; thoughtSignature?: string; annotations?: UrlCitation[]; cacheControl?: CacheControl };
export type ImagePart = { type: 'image'; source: ImageSource; detail?: string; cacheControl?: CacheControl };

export type Part = TextPart | ImagePart | ToolCallPart | ToolResultPart | ReasoningPart;

/**
 * Input the gateway does not translate (a document, audio, video, a file by id, content the provider
 * keeps, a block of a kind it does not know): it reaches only the client format's own upstreams,
 * in the body passed through, and is not among the parts. What the hold needs to bound it is kept
 * here (pipeline/estimate.ts):
 * - `image`: an image the parts do not carry (a file id: `source` null, its size unknown);
 * - `media`: audio, video or a document, with its media type and, when inline, its base64 bytes;
 * - `text`: text-like content (a text document, an earlier server tool's result), by its length;
 * - `stored`: content the provider holds and bills as input (a stored response or conversation, a
 *   prompt template, remote tool listings): its size is unknown.
 */
export type OpaqueInput =
  | { kind: 'image'; source: ImageSource | null; detail?: string }
  | { kind: 'media'; mediaType?: string; data?: string }
  | { kind: 'text'; chars: number }
  | { kind: 'stored'; what: string };

/**
 * `system`: an instruction at this point of the conversation (Anthropic's mid-conversation system
 * messages), text parts only. Instructions before the first turn are in `Request.system`.
 */
export type Message = { role: 'user' | 'assistant' | 'system'; content: Part[] };

export type Tool = { name: string; description?: string; parameters: Record<string, unknown>; cacheControl?: CacheControl };

export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

/** `param`: where the client's format asked for it, named in errors (default `response_format`). */
export type ResponseFormat = { param?: string } & (
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean; description?: string }
);

export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';

export type Request = {
  /** The upstream model id (set by routing). */
  model: string;
  system: string[];
  /** Cache breakpoints on `system` entries, by the same index (an entry without one is undefined). */
  systemCacheControl?: (CacheControl | undefined)[];
  /** A request-wide breakpoint: the provider places it on the last cacheable block (Anthropic's automatic caching). */
  cacheControl?: CacheControl;
  messages: Message[];
  tools?: Tool[];
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  seed?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  stop?: string[];
  /**
   * Either an effort (chat) or a token budget (Messages thinking); converters map one to the other.
   * `adaptive`: the client lets the model decide whether to think (Anthropic's adaptive thinking or
   * effort), so it is only sent to models known to reason.
   */
  reasoning?: { effort?: ReasoningEffort; budgetTokens?: number; adaptive?: boolean };
  responseFormat?: ResponseFormat;
  stream: boolean;
  /** End-user id for abuse tracking, where the provider has a slot for it. */
  user?: string;
  /**
   * The client's own name for requests that share a prompt cache (`prompt_cache_key`), else its
   * end-user id: the router keeps such requests on one upstream key (docs/routing.md).
   */
  affinityHint?: string;
  /** The client asked for web search (a built-in tool, `web_search_options`, or a server tool). */
  webSearch?: boolean;
  /**
   * What the client sent that only its own format's upstreams understand (e.g. `context_management`):
   * kept when passed through, dropped when translated and then named in `X-Gateway-Warnings`.
   */
  untranslated?: string[];
  /** Input only the client format's own upstreams read (see OpaqueInput), for the hold; absent when none. */
  opaque?: OpaqueInput[];
  /**
   * Top-level fields the client's format does not have (a misspelling, another API's field): kept
   * when passed through (the provider decides), dropped when translated and named "unknown field".
   */
  unknownFields?: UnknownField[];
};

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'refusal' | 'pause';

/**
 * An answer's usage as the provider counts it. The totals hold everything; the other fields are
 * parts of them (billing/buckets.ts splits them into buckets that do not overlap). The optional
 * parts are absent where the upstream did not report them.
 */
export type Usage = {
  /** All prompt tokens: cache reads and writes, audio and images included. */
  inputTokens: number;
  /** All generated tokens: reasoning, audio and images included. */
  outputTokens: number;
  /** Of the input, tokens read from the provider's prompt cache. */
  cachedTokens: number;
  /** Of the input, tokens written to the prompt cache (all lifetimes). */
  cacheWriteTokens: number;
  /** Of `cacheWriteTokens`, those written for an hour (Anthropic's 1-hour cache); the rest are 5-minute writes. */
  cacheWrite1hTokens?: number;
  /** Of the output, reasoning (thinking) tokens. */
  reasoningTokens: number;
  /** Of the input, audio tokens. */
  audioInputTokens?: number;
  /** Of the input, image (and video frame) tokens. */
  imageInputTokens?: number;
  /** Of the output, audio tokens. */
  audioOutputTokens?: number;
  /** Of the output, image tokens. */
  imageOutputTokens?: number;
  /** Web searches the provider ran for the answer (billed per call by some). */
  webSearchCalls?: number;
};

export const emptyUsage = (): Usage => ({ inputTokens: 0, outputTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 });

export type Response = {
  id: string;
  model: string;
  content: (TextPart | ToolCallPart | ReasoningPart)[];
  finishReason: FinishReason;
  stopSequence?: string | null;
  usage: Usage | null;
  /** The model searched the web while answering (billed with the surcharge). */
  webSearch?: boolean;
};

/**
 * Stream events. Parts are opened and closed explicitly so encoders that need block boundaries
 * (Messages) and those that do not (chat) both work from one sequence.
 */
export type StreamEvent =
  | { type: 'start'; id: string; model: string; usage?: Partial<Usage> }
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'reasoning_signature'; signature: string }
  | { type: 'reasoning_redacted'; data: string }
  | { type: 'tool_call_start'; index: number; id: string; name: string; thoughtSignature?: string }
  | { type: 'tool_call_delta'; index: number; arguments: string }
  | { type: 'text_signature'; signature: string }
  | { type: 'finish'; reason: FinishReason; stopSequence?: string | null }
  | { type: 'usage'; usage: Usage }
  | { type: 'web_search' }
  /** Citations for the text streamed so far (known at the end of a gateway web search). */
  | { type: 'annotations'; annotations: UrlCitation[] }
  /** A failure the upstream reported in-band and the client format forwards itself (Responses). */
  | { type: 'failed'; message: string; code?: string | null };

/** Collects a stream into a response: used to validate structured output and to test encoders. */
export class ResponseAccumulator {
  id = '';
  model = '';
  content: Response['content'] = [];
  finishReason: FinishReason = 'stop';
  stopSequence: string | null = null;
  usage: Usage | null = null;
  webSearch = false;
  failure: { message: string; code?: string | null } | null = null;
  private toolByIndex = new Map<number, ToolCallPart>();

  push(e: StreamEvent): void {
    const last = this.content[this.content.length - 1];
    switch (e.type) {
      case 'start':
        this.id = e.id;
        this.model = e.model;
        break;
      case 'text':
        if (last?.type === 'text') last.text += e.text;
        else this.content.push({ type: 'text', text: e.text });
        break;
      case 'text_signature':
        if (last?.type === 'text') last.thoughtSignature = e.signature;
        else this.content.push({ type: 'text', text: '', thoughtSignature: e.signature });
        break;
      case 'reasoning':
        if (last?.type === 'reasoning' && !last.signature && !last.redactedData) last.text += e.text;
        else this.content.push({ type: 'reasoning', text: e.text });
        break;
      case 'reasoning_signature':
        if (last?.type === 'reasoning') last.signature = e.signature;
        else this.content.push({ type: 'reasoning', text: '', signature: e.signature });
        break;
      case 'reasoning_redacted':
        this.content.push({ type: 'reasoning', text: '', redactedData: e.data });
        break;
      case 'tool_call_start': {
        const part: ToolCallPart = { type: 'tool_call', id: e.id, name: e.name, arguments: '', thoughtSignature: e.thoughtSignature };
        this.toolByIndex.set(e.index, part);
        this.content.push(part);
        break;
      }
      case 'tool_call_delta': {
        const part = this.toolByIndex.get(e.index);
        if (part) part.arguments += e.arguments;
        break;
      }
      case 'finish':
        this.finishReason = e.reason;
        this.stopSequence = e.stopSequence ?? null;
        break;
      case 'usage':
        this.usage = e.usage;
        break;
      case 'web_search':
        this.webSearch = true;
        break;
      case 'annotations':
        if (last?.type === 'text') last.annotations = [...(last.annotations ?? []), ...e.annotations];
        break;
      case 'failed':
        this.failure = { message: e.message, code: e.code };
        break;
    }
  }

  response(): Response {
    for (const p of this.content) if (p.type === 'tool_call' && p.arguments === '') p.arguments = '{}';
    return { id: this.id, model: this.model, content: this.content, finishReason: this.finishReason, stopSequence: this.stopSequence, usage: this.usage, webSearch: this.webSearch };
  }
}

/** A finished response as the stream events that would have produced it. */
export function responseEvents(r: Response): StreamEvent[] {
  const out: StreamEvent[] = [{ type: 'start', id: r.id, model: r.model }];
  if (r.webSearch) out.push({ type: 'web_search' });
  r.content.forEach((p, index) => {
    if (p.type === 'text') {
      out.push({ type: 'text', text: p.text });
      if (p.annotations?.length) out.push({ type: 'annotations', annotations: p.annotations });
    } else if (p.type === 'reasoning') {
      if (p.redactedData) out.push({ type: 'reasoning_redacted', data: p.redactedData });
      else {
        if (p.text) out.push({ type: 'reasoning', text: p.text });
        if (p.signature) out.push({ type: 'reasoning_signature', signature: p.signature });
      }
    } else {
      out.push({ type: 'tool_call_start', index, id: p.id, name: p.name, thoughtSignature: p.thoughtSignature });
      out.push({ type: 'tool_call_delta', index, arguments: p.arguments });
    }
  });
  out.push({ type: 'finish', reason: r.finishReason, stopSequence: r.stopSequence });
  if (r.usage) out.push({ type: 'usage', usage: r.usage });
  return out;
}

/** The text of a mid-conversation system message (text parts only), as one string. */
export const systemMessageText = (m: Message) => m.content.map((p) => (p.type === 'text' ? p.text : '')).join('\n\n');

/** How a mid-conversation system message reads where it has to travel as user text. */
export const markedSystemText = (text: string) => `<system>\n${text}\n</system>`;

/**
 * Mid-conversation system messages as marked user text, for upstreams whose conversations have no
 * place for them (Gemini; OpenAI-compatible servers, whose chat templates often accept a system
 * message only first). Joined to the user turn before them, else the next one, so turns still alternate.
 */
export function systemMessagesAsUserText(messages: Message[]): Message[] {
  if (!messages.some((m) => m.role === 'system')) return messages;
  const out: Message[] = [];
  let carried: Part[] = [];
  for (const m of messages) {
    if (m.role === 'system') {
      const parts = m.content.map((p): Part => (p.type === 'text' ? { type: 'text', text: markedSystemText(p.text) } : p));
      const prev = out[out.length - 1];
      if (prev?.role === 'user') prev.content.push(...parts);
      else carried.push(...parts);
    } else if (m.role === 'user') {
      // Tool results keep their place at the start of the turn.
      const results = m.content.filter((p) => p.type === 'tool_result');
      out.push({ role: 'user', content: [...results, ...carried, ...m.content.filter((p) => p.type !== 'tool_result')] });
      carried = [];
    } else {
      if (carried.length) out.push({ role: 'user', content: carried });
      carried = [];
      out.push(m);
    }
  }
  if (carried.length) out.push({ role: 'user', content: carried });
  return out;
}

/** A request body's cache grouping: OpenAI's `prompt_cache_key`, else its end-user ids (`safety_identifier`, `user`). */
export function affinityHintOf(body: object): string | undefined {
  const b = body as Record<string, unknown>;
  for (const field of ['prompt_cache_key', 'safety_identifier', 'user']) {
    const v = b[field];
    if (typeof v === 'string' && v) return `${field}:${v}`;
  }
  return undefined;
}
