// OpenAI's own token count (`POST /responses/input_tokens`): it takes a Responses request's input
// side, so a canonical request is written as Responses input items here, whatever format the
// generation itself would use (chat completions for chat and Messages clients).
import type * as C from '../../translate/canonical.ts';
import { pickFields, tokenCountOf, type TokenCounter } from '../types.ts';
import { vendorTarget } from '../vendor-client.ts';
import { asWire } from '../../upstream/json.ts';
import { openaiClient } from './client.ts';
import type * as W from './wire.ts';

const imageUrl = (s: C.ImageSource) => (s.kind === 'url' ? s.url : `data:${s.mediaType};base64,${s.data}`);

const textOf = (parts: C.Part[]) => parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');

/** Messages as Responses input items: text and images, tool calls and their results (reasoning of other providers is not OpenAI's to read). */
export function inputItems(messages: C.Message[]): W.InputItem[] {
  const items: W.InputItem[] = [];
  for (const m of messages) {
    if (m.role === 'system') {
      items.push({ role: 'system', content: textOf(m.content) });
      continue;
    }
    let content: W.InputContent[] = [];
    const flush = () => {
      if (!content.length) return;
      if (m.role === 'assistant') items.push({ role: 'assistant', content: content.map((c) => (c.type === 'input_text' ? c.text : '')).join('') });
      else items.push({ role: 'user', content });
      content = [];
    };
    for (const p of m.content) {
      if (p.type === 'text') content.push({ type: 'input_text', text: p.text });
      else if (p.type === 'image') content.push({ type: 'input_image', image_url: imageUrl(p.source), detail: p.detail ?? 'auto' });
      else if (p.type === 'tool_call') {
        flush();
        items.push({ type: 'function_call', call_id: p.id, name: p.name, arguments: p.arguments });
      } else if (p.type === 'tool_result') {
        flush();
        items.push({ type: 'function_call_output', call_id: p.toolCallId, output: textOf(p.content) });
      }
    }
    flush();
  }
  return items;
}

export function encodeInputTokensBody(req: C.Request): W.InputTokensRequest {
  const body: W.InputTokensRequest = { model: req.model, input: inputItems(req.messages) };
  if (req.system.length) body.instructions = req.system.join('\n\n');
  if (req.tools?.length) body.tools = req.tools.map((t) => ({ type: 'function', name: t.name, description: t.description, parameters: t.parameters, strict: false }));
  if (req.toolChoice) body.tool_choice = typeof req.toolChoice === 'string' ? req.toolChoice : { type: 'function', name: req.toolChoice.name };
  const rf = req.responseFormat;
  if (rf?.type === 'json_schema') body.text = { format: { type: 'json_schema', name: rf.name, schema: rf.schema, ...(rf.strict !== undefined ? { strict: rf.strict } : {}) } };
  else if (rf?.type === 'json_object') body.text = { format: { type: 'json_object' } };
  return body;
}

/** What `responses/input_tokens` takes of a Responses body (a client's own, passed through). */
const COUNTED_FIELDS = ['model', 'input', 'instructions', 'tools', 'tool_choice', 'parallel_tool_calls', 'text', 'reasoning', 'truncation', 'previous_response_id', 'conversation'];

const read = (answer: unknown) => tokenCountOf(asWire<W.InputTokens | null>(answer)?.input_tokens);

/** For chat completions upstreams (chat and Messages clients): the canonical request written as Responses input. */
export const openAiInputTokens: TokenCounter = {
  call: (req, ctx) => ({ ...vendorTarget(openaiClient, ctx.provider, '/responses/input_tokens'), body: encodeInputTokensBody(req) }),
  read,
};

/**
 * For Responses upstreams, which only ever get a Responses client's own body: it is counted as it
 * is (its stored items, file ids and built-in tools included).
 */
export const openAiResponsesInputTokens: TokenCounter = {
  call: (req, ctx, { http, native }) => ({
    ...vendorTarget(openaiClient, ctx.provider, '/responses/input_tokens'),
    body: native ? pickFields(http.body, COUNTED_FIELDS) : encodeInputTokensBody(req),
  }),
  read,
};
