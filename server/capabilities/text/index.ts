// Text generation in the three client formats (spec 4.1, 4.2): chat completions, Messages and
// Responses, each decoded to the canonical request and run by the one engine (engine.ts).
import type { Caller, CapabilityDescriptor } from '../descriptor.ts';
import { itemReferenceIds, responsesToCanonical } from '../../translate/responses.ts';
import { chatToCanonical } from '../../translate/chat.ts';
import { messagesToCanonical } from '../../translate/messages.ts';
import { runText, type TextCall } from './engine.ts';
import { chatFormat, messagesFormat, responsesFormat } from './formats.ts';

const header = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/** A text call: the caller's facts, and what the client format decoded. */
const textCall = (call: Caller, decoded: Omit<TextCall, keyof Caller>): TextCall => ({ principal: call.principal, requestId: call.requestId, log: call.log, ...decoded });

export const textCapability: CapabilityDescriptor = {
  routes: {
    chatCompletions: {
      capability: 'chat',
      run(deps, { body }, call) {
        const request = chatToCanonical(body);
        const format = chatFormat(body.stream_options?.include_usage === true, !!request.webSearch, deps.search !== null);
        return runText(deps, textCall(call, { format, raw: body, request, clientHeaders: {} }));
      },
    },
    messages: {
      capability: 'messages',
      run(deps, { body }, call) {
        const decoded = messagesToCanonical(body);
        const format = messagesFormat(!!decoded.request.webSearch, deps.search !== null, decoded.nativeOnly);
        // Anthropic's version and beta flags reach an Anthropic upstream.
        const clientHeaders = { 'anthropic-version': header(call.headers['anthropic-version']), 'anthropic-beta': header(call.headers['anthropic-beta']) };
        return runText(deps, textCall(call, { format, raw: body, request: decoded.request, clientHeaders }));
      },
    },
    responses: {
      capability: 'responses',
      async run(deps, { body }, call) {
        const ids = itemReferenceIds(body);
        const decoded = responsesToCanonical(body, ids.length ? await deps.items.lookup(ids) : new Map());
        const format = responsesFormat(body, decoded.builtIns, deps.search !== null, decoded.nativeOnly, (items) => deps.items.remember(items));
        return runText(deps, textCall(call, { format, raw: body, request: decoded.request, clientHeaders: {} }));
      },
    },
  },
};
