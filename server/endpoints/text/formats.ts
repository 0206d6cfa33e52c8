import { chatStrippedFields } from '../../../contract/chat.ts';
import type { GatewayError } from '../../http/errors.ts';
import { ChatStreamEncoder, canonicalToChat } from '../../translate/chat.ts';
import { MessagesStreamEncoder, canonicalToMessages, sseEvent } from '../../translate/messages.ts';
import type { ClientFormat } from './engine.ts';

type Json = Record<string, any>;

/** Chat completions. `includeUsage`: whether the client asked for the usage chunk. */
export function chatFormat(includeUsage: boolean): ClientFormat {
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
    passthroughFrame(e, { json }) {
      if (json === null) return 'data: [DONE]\n\n';
      if (json.usage && !includeUsage) {
        // The usage chunk was forced for billing; a client that did not ask never sees it.
        if (!json.choices?.length) return '';
        delete json.usage;
        return `data: ${JSON.stringify(json)}\n\n`;
      }
      return `data: ${e.data}\n\n`;
    },
    errorFrame: (err: GatewayError) => `data: ${JSON.stringify(err.toBody())}\n\n`,
  };
}

export const messagesFormat: ClientFormat = {
  endpoint: 'messages',
  native: 'anthropic',
  passthroughBody: (raw, upstreamModel) => ({ ...raw, model: upstreamModel }),
  encodeResponse: canonicalToMessages,
  streamEncoder: (model) => new MessagesStreamEncoder(model),
  passthroughFrame: (e, { json }) => `event: ${e.event ?? json?.type ?? 'message'}\ndata: ${e.data}\n\n`,
  // `type: error` for Messages clients, the standard error body fields inside `error`.
  errorFrame: (err: GatewayError) => sseEvent('error', { type: 'error', error: err.toBody().error }),
};
