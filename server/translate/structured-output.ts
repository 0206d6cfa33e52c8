import { Ajv, type ValidateFunction } from 'ajv';
import { GatewayError } from '../runtime/errors.ts';
import type * as C from './canonical.ts';

const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: false });
const cache = new Map<string, ValidateFunction>();

function validator(schema: Record<string, unknown>): ValidateFunction | null {
  const key = JSON.stringify(schema);
  let v = cache.get(key);
  if (!v) {
    try {
      v = ajv.compile(schema);
    } catch {
      return null; // a schema ajv cannot compile was the client's to send; the upstream accepted it
    }
    if (cache.size > 500) cache.delete(cache.keys().next().value!);
    cache.set(key, v);
  }
  return v;
}

/**
 * Checks generated text against the requested JSON output. A model answer that does not satisfy
 * the schema is not a success: it fails with 502 provider_error / invalid_structured_output
 * (in a stream: the error event), and the tokens it used are still billed.
 */
export function checkStructuredOutput(format: C.ResponseFormat | undefined, content: C.Response['content'], finish: C.FinishReason): void {
  if (!format || format.type === 'text' || finish === 'tool_calls' || finish === 'length' || finish === 'content_filter' || finish === 'refusal') return;
  const text = content.filter((p): p is C.TextPart => p.type === 'text').map((p) => p.text).join('');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid(format, 'the model output is not valid JSON');
  }
  if (format.type === 'json_object') {
    if (!value || typeof value !== 'object' || Array.isArray(value)) throw invalid(format, 'the model output is not a JSON object');
    return;
  }
  const v = validator(format.schema);
  if (v && !v(value)) {
    const e = v.errors?.[0];
    throw invalid(format, `the model output does not match the schema '${format.name}' (${e?.instancePath || '/'} ${e?.message ?? 'invalid'})`);
  }
}

const invalid = (format: C.ResponseFormat, why: string) =>
  new GatewayError(502, 'provider_error', 'invalid_structured_output', `Structured output failed validation: ${why}.`, format.param ?? 'response_format');
