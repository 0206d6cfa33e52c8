// The four client formats of text generation (docs/api.md, "Text"). Each is one value: the upstream
// format it passes through untranslated, and one `decode` from the validated body to the canonical
// request, the built-in tools asked for, and the codec that writes this request's answers.
import type { FormatLabel } from '../../pipeline/concern.ts';
import { anthropicClientFormat } from '../../client-formats/anthropic/index.ts';
import { geminiClientFormat } from '../../client-formats/gemini/index.ts';
import { openaiClientFormat } from '../../client-formats/openai/index.ts';
import type { z } from 'zod';
import { chatStrippedFields, type ChatCompletionRequest } from '../../../contract/chat.ts';
import type { MessagesInput } from '../../../contract/messages.ts';
import { responsesStrippedFields, type ResponsesRequest } from '../../../contract/responses.ts';
import { randomToken } from '../../runtime/secrets.ts';
import type { GatewayError } from '../../runtime/errors.ts';
import type { TextFormat } from '../../providers/types.ts';
import type { ItemStore } from '../../stores/items.ts';
import { objectAt, stringAt, type JsonObject } from '../../upstream/json.ts';
import type * as C from '../../translate/canonical.ts';
import { ChatStreamEncoder, canonicalToChat, chatToCanonical } from '../../translate/chat.ts';
import { MessagesStreamEncoder, canonicalToMessages, messagesToCanonical, sseEvent } from '../../translate/messages.ts';
import { ResponsesStreamEncoder, canonicalToResponse, itemReferenceIds, responseShell, responsesSse, responsesToCanonical, type RememberItems } from '../../translate/responses.ts';
import { withClientModel } from '../../translate/model-id.ts';
import { GeminiFraming, GeminiStreamEncoder, canonicalToGemini, geminiErrorOf, geminiToCanonical, type GeminiStreamMode } from '../../translate/gemini.ts';
import type { GeminiGenerateContentInput } from '../../../contract/gemini.ts';

export type TextEndpoint = 'chat' | 'messages' | 'responses' | 'generate_content';

/** How one request's answers are written in its client's format. */
export type ClientCodec = {
  /** The client's body for a native upstream (stripped fields removed, model replaced, usage forced). */
  passthroughBody(upstreamModel: string): JsonObject;
  encodeResponse(r: C.Response, model: string): Readonly<Record<string, unknown>>;
  streamEncoder(model: string): { push(e: C.StreamEvent): string; end(): string };
  /**
   * Native stream: forward one upstream event, or drop/rewrite it (returns the frame to write).
   * `model`: the id the client sent, which every answer carries.
   */
  passthroughFrame(event: { event?: string; data: string }, json: JsonObject | null, model: string): string;
  /** After the last pass-through frame: what closes the stream in this format (Gemini's JSON-array stream ends with `]`). */
  passthroughEnd?(): string;
  errorFrame(err: GatewayError): string;
  /** A stream's content type when it is not server-sent events (Gemini's stream without `alt=sse` is one JSON array). */
  streamContentType?: string;
};

/** What a client format made of one request body. */
export type DecodedText = {
  request: C.Request;
  /** The built-in (server-run) tools the client asked for, by name; web search among them is also `request.webSearch`. */
  builtIns: string[];
  /** Set when the request can only go to the endpoint's native upstreams; this is the error for the others. */
  nativeOnly: GatewayError | null;
  /** The client's headers an upstream of the native format receives. */
  clientHeaders: Record<string, string | undefined>;
  codec: ClientCodec;
};

export type DecodeContext = {
  headers: Record<string, string | string[] | undefined>;
  items: Pick<ItemStore, 'lookup' | 'remember'>;
};

/** A client format of text generation. */
export type ClientFormat<Body> = {
  endpoint: TextEndpoint;
  /** Its label in the request log and traces (`format`): whose API the client speaks. */
  label: FormatLabel;
  /** The upstream format this endpoint passes through untranslated. */
  native: TextFormat;
  decode(body: Body, ctx: DecodeContext): Promise<DecodedText>;
  /** A count of the request's input tokens, in this format's answer shape (formats with a counting route). */
  tokenCount?(inputTokens: number): Readonly<Record<string, unknown>>;
};

const header = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/** The validated body as the JSON object it was sent as (the contract's types are JSON by construction). */
const asJson = (body: object): JsonObject => body as JsonObject;

const without = (body: JsonObject, fields: readonly string[], extra: JsonObject): JsonObject => {
  const out: JsonObject = { ...body, ...extra };
  for (const f of fields) delete out[f];
  return out;
};


/** Chat completions. The usage chunk is asked of a native upstream always, for billing, and shown only to a client that asked. */
export const chatFormat: ClientFormat<z.infer<typeof ChatCompletionRequest>> = {
  label: openaiClientFormat.name,
  endpoint: 'chat',
  native: 'openai-chat',
  async decode(body) {
    const request = chatToCanonical(body);
    const includeUsage = body.stream_options?.include_usage === true;
    const raw = asJson(body);
    return {
      request,
      builtIns: request.webSearch ? ['web_search'] : [],
      nativeOnly: null,
      clientHeaders: {},
      codec: {
        passthroughBody(upstreamModel) {
          const out = without(raw, chatStrippedFields, { model: upstreamModel });
          if (out.stream) out.stream_options = { ...(objectAt(out.stream_options) ?? {}), include_usage: true };
          return out;
        },
        encodeResponse: canonicalToChat,
        streamEncoder: (model) => new ChatStreamEncoder(model, includeUsage),
        passthroughFrame(e, json, model) {
          if (json === null) return 'data: [DONE]\n\n';
          if (json.usage && !includeUsage) {
            // The usage chunk was forced for billing; a client that did not ask never sees it.
            if (!Array.isArray(json.choices) || !json.choices.length) return '';
            const { usage: _usage, ...rest } = json;
            return `data: ${JSON.stringify({ ...rest, model })}\n\n`;
          }
          return `data: ${withClientModel(e.data, json.model, model, () => JSON.stringify({ ...json, model }))}\n\n`;
        },
        errorFrame: (err) => `data: ${JSON.stringify(err.toBody())}\n\n`,
      },
    };
  },
};

/** Messages. Anthropic's version and beta flags reach an Anthropic upstream. */
export const messagesFormat: ClientFormat<MessagesInput> = {
  label: anthropicClientFormat.name,
  endpoint: 'messages',
  native: 'anthropic',
  tokenCount: (inputTokens) => ({ input_tokens: inputTokens }),
  async decode(body, { headers }) {
    const { request, nativeOnly } = messagesToCanonical(body);
    const raw = asJson(body);
    return {
      request,
      builtIns: request.webSearch ? ['web_search'] : [],
      nativeOnly,
      clientHeaders: { 'anthropic-version': header(headers['anthropic-version']), 'anthropic-beta': header(headers['anthropic-beta']) },
      codec: {
        passthroughBody: (upstreamModel) => ({ ...raw, model: upstreamModel }),
        encodeResponse: canonicalToMessages,
        streamEncoder: (model) => new MessagesStreamEncoder(model),
        passthroughFrame(e, json, model) {
          const message = json?.type === 'message_start' ? objectAt(json.message) : null;
          const data = message ? withClientModel(e.data, message.model, model, () => JSON.stringify({ ...json, message: { ...message, model } })) : e.data;
          return `event: ${e.event ?? stringAt(json?.type) ?? 'message'}\ndata: ${data}\n\n`;
        },
        // `type: error` for Messages clients, the standard error body fields inside `error`.
        errorFrame: (err) => sseEvent('error', { type: 'error', error: err.toBody().error }),
      },
    };
  },
};

/** Responses. Items named by `item_reference` are looked up first; a translated answer's items are remembered for later ones. */
export const responsesFormat: ClientFormat<ResponsesRequest> = {
  label: openaiClientFormat.name,
  endpoint: 'responses',
  native: 'openai-responses',
  tokenCount: (inputTokens) => ({ object: 'response.input_tokens', input_tokens: inputTokens }),
  async decode(body, { items }) {
    const ids = itemReferenceIds(body);
    const { request, builtIns, nativeOnly } = responsesToCanonical(body, ids.length ? await items.lookup(ids) : new Map());
    const remember: RememberItems = (made) => items.remember(made);
    const raw = asJson(body);
    let encoder: ResponsesStreamEncoder | null = null;
    let lastSeq = -1;
    return {
      request,
      builtIns,
      nativeOnly,
      clientHeaders: {},
      codec: {
        passthroughBody: (upstreamModel) => without(raw, responsesStrippedFields, { model: upstreamModel }),
        encodeResponse: (r, model) => canonicalToResponse(r, model, body, remember),
        streamEncoder: (model) => (encoder = new ResponsesStreamEncoder(model, body, remember)),
        passthroughFrame(e, json, model) {
          if (typeof json?.sequence_number === 'number') lastSeq = json.sequence_number;
          const response = objectAt(json?.response);
          const data = response?.model !== undefined ? withClientModel(e.data, response.model, model, () => JSON.stringify({ ...json, response: { ...response, model } })) : e.data;
          return `event: ${stringAt(json?.type) ?? e.event}\ndata: ${data}\n\n`;
        },
        errorFrame(err) {
          if (encoder) return encoder.fail(err);
          // A pass-through stream cut short: continue the upstream's numbering.
          const e = err.toBody().error;
          const response = { ...responseShell(`resp_${randomToken(40)}`, body.model, body, Math.floor(Date.now() / 1000)), status: 'failed', error: { code: e.code, message: e.message } };
          return (
            responsesSse({ type: 'error', code: e.code, message: e.message, param: e.param ?? null, error: e, sequence_number: ++lastSeq }) +
            responsesSse({ type: 'response.failed', response, sequence_number: ++lastSeq })
          );
        },
      },
    };
  },
};

/**
 * A Gemini-format request: the model and the stream's framing come from the path and query
 * (`:streamGenerateContent?alt=sse` is SSE, without `alt` one JSON array), `null` for `:generateContent`.
 */
export type GeminiCall = { model: string; body: GeminiGenerateContentInput; stream: GeminiStreamMode | null };

/** Gemini's API. A Gemini upstream gets the body as sent (the model is in its URL); its frames go out as they came. */
export const geminiFormat: ClientFormat<GeminiCall> = {
  label: geminiClientFormat.name,
  endpoint: 'generate_content',
  native: 'gemini',
  tokenCount: (inputTokens) => ({ totalTokens: inputTokens }),
  async decode({ model, body, stream }) {
    const { request, nativeOnly } = geminiToCanonical(body, model, stream !== null);
    const { model: _inPath, ...raw } = asJson(body);
    const mode = stream ?? 'sse';
    // A translated stream frames its chunks in its encoder; a passed-through one here.
    const framing = new GeminiFraming(mode);
    let encoder: GeminiStreamEncoder | null = null;
    return {
      request,
      builtIns: request.webSearch ? ['web_search'] : [],
      nativeOnly,
      clientHeaders: {},
      codec: {
        ...(mode === 'json-array' ? { streamContentType: 'application/json; charset=utf-8' } : {}),
        passthroughBody: () => raw,
        encodeResponse: canonicalToGemini,
        streamEncoder: (m) => (encoder = new GeminiStreamEncoder(m, mode)),
        passthroughFrame: (e, json) => (json === null ? '' : framing.frame(e.data)),
        passthroughEnd: () => framing.close(),
        errorFrame: (err) => (encoder ? encoder.fail(err) : framing.frame(JSON.stringify(geminiErrorOf(err))) + framing.close()),
      },
    };
  },
};
