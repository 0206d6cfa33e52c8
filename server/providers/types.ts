import type { ProviderConfig } from '../config/schema.ts';
import type * as C from '../translate/canonical.ts';
import type { UpstreamTarget } from '../upstream/http.ts';

/** Per-call facts the provider converters need. */
export type CallContext = {
  provider: ProviderConfig;
  /** Headers the client sent that this provider understands (e.g. anthropic-version). */
  clientHeaders: Record<string, string | undefined>;
  /** The model's configured max output, for providers that require max_tokens. */
  defaultMaxTokens?: number;
};

export type HttpCall = UpstreamTarget & { body: Record<string, unknown> };

/** The text wire formats; a client format passes its own through untranslated. */
export type TextFormat = 'openai-chat' | 'openai-responses' | 'anthropic' | 'gemini';

export interface StreamDecoder {
  /** One upstream SSE event in, canonical events out. Throws UpstreamStreamError on an in-stream error. */
  push(event: { event?: string; data: string }): C.StreamEvent[];
  /**
   * The same for an event's data already parsed (pass-through parses each event once). The data is
   * unchecked JSON: each decoder names it as its vendor's stream event (upstream/json.ts `asWire`).
   */
  pushParsed(data: unknown): C.StreamEvent[];
  /** Called at the end of the upstream stream; throws when it ended early. */
  end(): C.StreamEvent[];
}

/** An upstream's own count of a request's input tokens (the gateway counts itself where there is none). */
export interface TokenCounter {
  /**
   * The counting call for a request. `generation`: the call a generation would make, and whether it
   * passes the client's own body through (`native`) or was translated.
   */
  call(req: C.Request, ctx: CallContext, generation: { http: HttpCall; native: boolean }): HttpCall;
  /** The input tokens in the counting answer, or null when it has none. */
  read(answer: unknown): number | null;
}

/** The fields of `body` among `fields` (those it has), in `fields`' order. */
export const pickFields = (body: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> =>
  Object.fromEntries(fields.filter((f) => body[f] !== undefined).map((f) => [f, body[f]]));

/** A count as an upstream reported it: a whole number of tokens, or nothing usable. */
export const tokenCountOf = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : null);

/** A text-generation wire format: how to ask, how to read the answer, and what the upstream does itself. */
export interface TextAdapter {
  format: TextFormat;
  /** A translated request's web search runs on the upstream (else the gateway searches, when configured). */
  nativeWebSearch: boolean;
  /** Image URLs must be downloaded and sent as bytes. */
  needsInlineImages?: boolean;
  /** The client's prompt-cache breakpoints (`cache_control`) reach the upstream; elsewhere they are dropped and named. */
  cacheBreakpoints?: boolean;
  /** Where, as whom and under which limits (a passed-through request needs no more). */
  endpoint(req: C.Request, ctx: CallContext): UpstreamTarget;
  /** The request translated into this wire format. */
  body(req: C.Request, ctx: CallContext): Record<string, unknown>;
  decode(body: unknown, ctx: CallContext): C.Response;
  streamDecoder(ctx: CallContext): StreamDecoder;
  /** Where the upstream counts tokens itself. */
  counter?: TokenCounter;
}

/** A translated request: the wire format's endpoint and body. */
export const buildCall = (wire: TextAdapter, req: C.Request, ctx: CallContext): HttpCall => ({ ...wire.endpoint(req, ctx), body: wire.body(req, ctx) });

/** Content the upstream cannot take at all (not a field to drop): the client's request is refused, naming `param`. */
export class UnsupportedContentError extends Error {
  constructor(
    message: string,
    readonly param = 'messages',
  ) {
    super(message);
    this.name = 'UnsupportedContentError';
  }
}
