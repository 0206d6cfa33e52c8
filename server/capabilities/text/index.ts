// Text generation in the three client formats (spec 4.1, 4.2): chat completions, Messages and
// Responses, each decoded to the canonical request and run by the one engine (engine.ts).
import type { CapabilityDescriptor } from '../descriptor.ts';
import { itemReferenceIds, responsesToCanonical } from '../../translate/responses.ts';
import { chatToCanonical } from '../../translate/chat.ts';
import { messagesToCanonical } from '../../translate/messages.ts';
import { runText } from './engine.ts';
import { chatFormat, messagesFormat, responsesFormat } from './formats.ts';

const header = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

export const textCapability: CapabilityDescriptor = {
  routes: {
    chatCompletions: {
      capability: 'chat',
      run(deps, { body }, call) {
        const request = chatToCanonical(body);
        const format = chatFormat(body.stream_options?.include_usage === true, !!request.webSearch, deps.search !== null);
        return runText(deps, { format, requestId: call.requestId, principal: call.principal, raw: body, request, clientHeaders: {}, log: call.log });
      },
    },
    messages: {
      capability: 'messages',
      run(deps, { body }, call) {
        const decoded = messagesToCanonical(body);
        const format = messagesFormat(!!decoded.request.webSearch, deps.search !== null, decoded.nativeOnly);
        // Anthropic's version and beta flags reach an Anthropic upstream.
        const clientHeaders = { 'anthropic-version': header(call.headers['anthropic-version']), 'anthropic-beta': header(call.headers['anthropic-beta']) };
        return runText(deps, { format, requestId: call.requestId, principal: call.principal, raw: body, request: decoded.request, clientHeaders, log: call.log });
      },
    },
    responses: {
      capability: 'responses',
      async run(deps, { body }, call) {
        const ids = itemReferenceIds(body);
        const decoded = responsesToCanonical(body, ids.length ? await deps.items.lookup(ids) : new Map());
        const format = responsesFormat(body, decoded.builtIns, deps.search !== null, decoded.nativeOnly, (items) => deps.items.remember(items));
        return runText(deps, { format, requestId: call.requestId, principal: call.principal, raw: body, request: decoded.request, clientHeaders: {}, log: call.log });
      },
    },
  },
};
