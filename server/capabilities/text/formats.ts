import { chatStrippedFields } from '../../../contract/chat.ts';
import { responsesStrippedFields } from '../../../contract/responses.ts';
import { randomToken } from '../../runtime/secrets.ts';
import { ResponsesStreamEncoder, WEB_SEARCH_TOOLS, canonicalToResponse, responseShell, responsesSse, type RememberItems } from '../../translate/responses.ts';
import type { GatewayError } from '../../runtime/errors.ts';
import { ChatStreamEncoder, canonicalToChat } from '../../translate/chat.ts';
import { MessagesStreamEncoder, canonicalToMessages, sseEvent } from '../../translate/messages.ts';
import type { TextFormat } from '../../providers/types.ts';
import type { TextTarget as Target } from '../../routing/targets.ts';
import type { ClientFormat } from './engine.ts';
import { withClientModel } from '../../translate/model-id.ts';

type Json = Record<string, any>;

/** Web search the client asked for but this upstream cannot do (no native search, no gateway backend). */
function searchStripped(target: Target, native: TextFormat, requested: boolean, gatewaySearch: boolean): string[] {
  if (!requested || target.adapter.format === native || target.adapter.nativeWebSearch || gatewaySearch) return [];
  return ['web_search'];
}

/**
 * Chat completions. `includeUsage`: whether the client asked for the usage chunk; `webSearch`:
 * it sent `web_search_options`.
 */
export function chatFormat(includeUsage: boolean, webSearch = false, gatewaySearch = false): ClientFormat {
  return {
    endpoint: 'chat',
    native: 'openai-chat',
    passthroughBody(raw, upstreamModel) {
      const body: Json = { ...raw, model: upstreamModel };
      for (const f of chatStrippedFields) delete body[f];
      if (body.stream) body.stream_options = { ...(body.stream_options ?? {}), include_usage: true };
      return body;
    },
    encodeResponse: canonicalToChat,
    streamEncoder: (model) => new ChatStreamEncoder(model, includeUsage),
    passthroughFrame(e, { json }, model) {
      if (json === null) return 'data: [DONE]\n\n';
      if (json.usage && !includeUsage) {
        // The usage chunk was forced for billing; a client that did not ask never sees it.
        if (!json.choices?.length) return '';
        delete json.usage;
        return `data: ${JSON.stringify({ ...json, model })}\n\n`;
      }
      return `data: ${withClientModel(e.data, json.model, model, () => JSON.stringify({ ...json, model }))}\n\n`;
    },
    errorFrame: (err: GatewayError) => `data: ${JSON.stringify(err.toBody())}\n\n`,
    stripped: (target) => searchStripped(target, 'openai-chat', webSearch, gatewaySearch),
  };
}

/**
 * Messages. `webSearch`: it sent Anthropic's web search server tool; `nativeOnly`: it sent what only
 * Anthropic models can take.
 */
export const messagesFormat = (webSearch = false, gatewaySearch = false, nativeOnly: GatewayError | null = null): ClientFormat => ({
  endpoint: 'messages',
  native: 'anthropic',
  nativeOnly,
  passthroughBody: (raw, upstreamModel) => ({ ...raw, model: upstreamModel }),
  encodeResponse: canonicalToMessages,
  streamEncoder: (model) => new MessagesStreamEncoder(model),
  passthroughFrame(e, { json }, model) {
    const message = json?.type === 'message_start' ? json.message : null;
    const data = message ? withClientModel(e.data, message.model, model, () => JSON.stringify({ ...json, message: { ...message, model } })) : e.data;
    return `event: ${e.event ?? json?.type ?? 'message'}\ndata: ${data}\n\n`;
  },
  // `type: error` for Messages clients, the standard error body fields inside `error`.
  errorFrame: (err: GatewayError) => sseEvent('error', { type: 'error', error: err.toBody().error }),
  stripped: (target) => searchStripped(target, 'anthropic', webSearch, gatewaySearch),
});

/**
 * Responses. `builtIns`: the built-in tools the client asked for; `gatewaySearch`: whether the
 * gateway can run web search itself for upstreams without a native one.
 */
export function responsesFormat(raw: Json, builtIns: string[], gatewaySearch: boolean, nativeOnly: GatewayError | null, remember: RememberItems): ClientFormat {
  let encoder: ResponsesStreamEncoder | null = null;
  let lastSeq = -1;
  return {
    endpoint: 'responses',
    native: 'openai-responses',
    nativeOnly,
    passthroughBody(body, upstreamModel) {
      const out: Json = { ...body, model: upstreamModel };
      for (const f of responsesStrippedFields) delete out[f];
      return out;
    },
    encodeResponse: (r, model) => canonicalToResponse(r, model, raw, remember),
    streamEncoder: (model) => (encoder = new ResponsesStreamEncoder(model, raw, remember)),
    passthroughFrame(e, { json }, model) {
      if (typeof json?.sequence_number === 'number') lastSeq = json.sequence_number;
      const response = json?.response;
      const data = response?.model !== undefined ? withClientModel(e.data, response.model, model, () => JSON.stringify({ ...json, response: { ...response, model } })) : e.data;
      return `event: ${json?.type ?? e.event}\ndata: ${data}\n\n`;
    },
    errorFrame(err: GatewayError) {
      if (encoder) return encoder.fail(err);
      // A pass-through stream cut short: continue the upstream's numbering.
      const e = err.toBody().error;
      const response = { ...responseShell(`resp_${randomToken(40)}`, raw.model, raw, Math.floor(Date.now() / 1000)), status: 'failed', error: { code: e.code, message: e.message } };
      return (
        responsesSse({ type: 'error', code: e.code, message: e.message, param: e.param ?? null, error: e, sequence_number: ++lastSeq }) +
        responsesSse({ type: 'response.failed', response, sequence_number: ++lastSeq })
      );
    },
    stripped(target) {
      if (target.adapter.format === 'openai-responses') return [];
      const searchable = target.adapter.nativeWebSearch || gatewaySearch;
      return builtIns.filter((b) => !(WEB_SEARCH_TOOLS.has(b) && searchable));
    },
  };
}
