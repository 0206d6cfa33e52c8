import type { ProviderConfig } from '../config/schema.ts';
import type * as C from '../translate/canonical.ts';
import type { UpstreamTarget } from './http.ts';

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
  /** The same for an event's data already parsed (pass-through parses each event once). */
  pushParsed(data: Record<string, any>): C.StreamEvent[];
  /** Called at the end of the upstream stream; throws when it ended early. */
  end(): C.StreamEvent[];
}

/** A text-generation wire format: how to ask, how to read the answer, and what the upstream does itself. */
export interface TextAdapter {
  format: TextFormat;
  /** A translated request's web search runs on the upstream (else the gateway searches, when configured). */
  nativeWebSearch: boolean;
  /** Image URLs must be downloaded and sent as bytes. */
  needsInlineImages?: boolean;
  /** Where, as whom and under which limits (a passed-through request needs no more). */
  endpoint(req: C.Request, ctx: CallContext): UpstreamTarget;
  /** The request translated into this wire format. */
  body(req: C.Request, ctx: CallContext): Record<string, unknown>;
  decode(body: unknown, ctx: CallContext): C.Response;
  streamDecoder(ctx: CallContext): StreamDecoder;
}

/** A translated request: the wire format's endpoint and body. */
export const buildCall = (wire: TextAdapter, req: C.Request, ctx: CallContext): HttpCall => ({ ...wire.endpoint(req, ctx), body: wire.body(req, ctx) });

/** An error the upstream reported inside a stream that had answered 200. */
export class UpstreamStreamError extends Error {
  constructor(
    message: string,
    readonly upstreamType?: string,
    /** The error object the upstream sent, when it sent one (its code or status classifies it). */
    readonly detail?: unknown,
  ) {
    super(message);
    this.name = 'UpstreamStreamError';
  }
}

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

export function parseJsonArgs(text: string): Record<string, unknown> {
  if (!text.trim()) return {};
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : { value: v };
  } catch {
    return { _raw: text };
  }
}

/** Reasoning effort ↔ thinking token budget, used where one side has efforts and the other budgets. */
export const effortBudgets: Record<Exclude<C.ReasoningEffort, 'none'>, number> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
  xhigh: 32768,
  // Gemini refuses larger budgets; Anthropic's own clients send `max` as an effort, not a budget.
  max: 32768,
};

export function budgetToEffort(budget: number): C.ReasoningEffort {
  if (budget <= 0) return 'none';
  if (budget <= 1024) return 'minimal';
  if (budget <= 4096) return 'low';
  if (budget <= 12288) return 'medium';
  if (budget <= 24576) return 'high';
  return 'xhigh';
}

export function reasoningBudget(r: C.Request['reasoning']): number | undefined {
  if (!r) return undefined;
  if (r.budgetTokens !== undefined) return r.budgetTokens;
  if (!r.effort) return undefined;
  return r.effort === 'none' ? 0 : effortBudgets[r.effort];
}
