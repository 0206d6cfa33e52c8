// Gemini's model methods (`models/{model}:generateContent`, `:streamGenerateContent`, `:countTokens`)
// as one route each under /v1beta and /v1: the path's rest names the model and the method, the
// body is checked against that method's schema, then the one text engine (or the counter) runs it.
import { GeminiCountTokensRequest, GeminiGenerateContentRequest } from '../../../contract/gemini.ts';
import { GeminiModelMethod } from '../../../contract/routes/gemini.ts';
import { isModelIdShaped } from '../../../contract/common.ts';
import { withoutModelsPrefix } from '../../client-formats/gemini/catalog.ts';
import { errors, validationError } from '../../runtime/errors.ts';
import { geminiCountTokensInput } from '../../translate/gemini.ts';
import type { CallInfo } from '../descriptor.ts';
import type { CapabilityDeps } from '../deps.ts';
import { countTokens } from './count-tokens.ts';
import { runFormat } from './engine.ts';
import { geminiFormat, type GeminiCall } from './formats.ts';

type Method = (typeof GeminiModelMethod.options)[number];

/** `gemini-2.5-flash:generateContent` (or with `models/` before it; the id may hold slashes) → the model and the method. */
export function modelAndMethod(rest: string): { model: string; method: Method } {
  const path = withoutModelsPrefix(rest);
  const colon = path.lastIndexOf(':');
  const model = colon > 0 ? path.slice(0, colon) : '';
  const method = colon > 0 ? path.slice(colon + 1) : '';
  if (!model || !GeminiModelMethod.options.includes(method as Method)) {
    throw errors.notFound(
      `Unknown method: POST models/${path}. This gateway serves models/{model}:generateContent, :streamGenerateContent and :countTokens for the text models of GET /v1beta/models.`,
      'not_found',
    );
  }
  // The path's model is the client's text, decoded (`x%00y`): refused as the body's `model` would be.
  if (!isModelIdShaped(model)) throw errors.invalid('The model in the path must be at most 256 characters, with no control characters: GET /v1beta/models lists the models this gateway serves.', 'model');
  return { model, method: method as Method };
}

type Input = { params: { '*': string }; query: { alt?: string }; body: unknown };

/** One Gemini-format model method. */
export async function geminiMethod(deps: CapabilityDeps, { params, query, body }: Input, info: CallInfo) {
  const { model, method } = modelAndMethod(params['*']);
  if (method === 'countTokens') {
    const parsed = GeminiCountTokensRequest.safeParse(body);
    if (!parsed.success) throw validationError(parsed.error.issues, 'body', body);
    return countTokens(geminiFormat, deps, { model, body: geminiCountTokensInput(parsed.data), stream: null }, info);
  }
  const parsed = GeminiGenerateContentRequest.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues, 'body', body);
  const stream = method === 'generateContent' ? null : query.alt === 'sse' ? 'sse' : 'json-array';
  return runFormat(geminiFormat, deps, { model, body: parsed.data, stream } satisfies GeminiCall, info);
}
