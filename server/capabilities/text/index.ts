// Text generation in the four client formats (docs/api.md, "Text"): chat completions,
// Messages, Responses and generateContent, each decoded by its client format (formats.ts) and run by
// the one engine (engine.ts); each format's token counting beside it (count-tokens.ts).
import type { CapabilityDescriptor } from '../descriptor.ts';
import { countTokens } from './count-tokens.ts';
import { runFormat as run } from './engine.ts';
import { chatFormat, geminiFormat, messagesFormat, responsesFormat } from './formats.ts';
import { geminiMethod } from './gemini-methods.ts';

export const textCapability: CapabilityDescriptor = {
  routes: {
    chatCompletions: { capability: 'chat', format: chatFormat.label, run: (deps, { body }, call) => run(chatFormat, deps, body, call) },
    messages: { capability: 'messages', format: messagesFormat.label, run: (deps, { body }, call) => run(messagesFormat, deps, body, call) },
    messagesCountTokens: { capability: 'messages', format: messagesFormat.label, run: (deps, { body }, call) => countTokens(messagesFormat, deps, body, call) },
    responses: { capability: 'responses', format: responsesFormat.label, run: (deps, { body }, call) => run(responsesFormat, deps, body, call) },
    responsesInputTokens: { capability: 'responses', format: responsesFormat.label, run: (deps, { body }, call) => countTokens(responsesFormat, deps, body, call) },
    geminiModelMethod: { capability: 'generate_content', format: geminiFormat.label, run: geminiMethod },
    geminiModelMethodV1: { capability: 'generate_content', format: geminiFormat.label, run: geminiMethod },
  },
};
