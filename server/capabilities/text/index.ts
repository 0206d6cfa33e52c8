// Text generation in the three client formats (spec 4.1, 4.2): chat completions, Messages and
// Responses, each decoded by its client format (formats.ts) and run by the one engine (engine.ts).
import type { CallInfo, CapabilityDescriptor } from '../descriptor.ts';
import type { CapabilityDeps } from '../deps.ts';
import { countTokens } from './count-tokens.ts';
import { runText } from './engine.ts';
import { chatFormat, messagesFormat, responsesFormat, type ClientFormat } from './formats.ts';

/** Decodes the body in its client format and runs it. */
async function run<Body>(format: ClientFormat<Body>, deps: CapabilityDeps, body: Body, call: CallInfo) {
  const decoded = await format.decode(body, { headers: call.headers, items: deps.items });
  return runText(deps, { principal: call.principal, requestId: call.requestId, log: call.log, format, ...decoded });
}

export const textCapability: CapabilityDescriptor = {
  routes: {
    chatCompletions: { capability: 'chat', run: (deps, { body }, call) => run(chatFormat, deps, body, call) },
    messages: { capability: 'messages', run: (deps, { body }, call) => run(messagesFormat, deps, body, call) },
    messagesCountTokens: { capability: 'messages', run: (deps, { body }, call) => countTokens(messagesFormat, deps, body, call) },
    responses: { capability: 'responses', run: (deps, { body }, call) => run(responsesFormat, deps, body, call) },
    responsesInputTokens: { capability: 'responses', run: (deps, { body }, call) => countTokens(responsesFormat, deps, body, call) },
  },
};
