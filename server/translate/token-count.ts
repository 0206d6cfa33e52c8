// The gateway's own count of a request's input tokens, for models whose upstream cannot count:
// the o200k_base tokenizer (OpenAI's, for GPT-4o and later; for other vendors' models an estimate
// of the same order), shipped with its vocabulary in the `gpt-tokenizer` package — nothing is
// downloaded at run time. Loaded on the first count, so an instance that never counts never holds it.
import type * as C from './canonical.ts';

/** The tokenizer the figure comes from, named where it is reported. */
export const LOCAL_TOKENIZER = 'o200k_base';

/** What a message costs besides its content (role and separators), as OpenAI's chat format counts it. */
const PER_MESSAGE = 3;
/** The answer's priming tokens, counted once. */
const PER_REQUEST = 3;
/** An image, whatever its size: OpenAI's low-detail cost (its size is not known without fetching it). */
const PER_IMAGE = 85;

type Counter = (text: string) => number;
let loading: Promise<Counter> | null = null;

function tokenizer(): Promise<Counter> {
  loading ??= import('gpt-tokenizer/encoding/o200k_base').then((m) => {
    // Text that looks like a special token (`<|endoftext|>`) is counted as the text it is.
    const options = { disallowedSpecial: new Set<string>() };
    return (text: string) => (text ? m.countTokens(text, options) : 0);
  });
  return loading;
}

function partTokens(count: Counter, p: C.Part): number {
  switch (p.type) {
    case 'text':
    case 'reasoning':
      return count(p.text);
    case 'image':
      return PER_IMAGE;
    case 'tool_call':
      return count(p.name) + count(p.arguments);
    case 'tool_result':
      return p.content.reduce((n, c) => n + (c.type === 'text' ? count(c.text) : PER_IMAGE), 0);
  }
}

/** The input tokens of a canonical request: system, messages, tools and the response schema. */
export async function countInputTokens(req: C.Request): Promise<number> {
  const count = await tokenizer();
  let n = PER_REQUEST;
  for (const s of req.system) n += PER_MESSAGE + count(s);
  for (const m of req.messages) n += PER_MESSAGE + m.content.reduce((sum, p) => sum + partTokens(count, p), 0);
  for (const t of req.tools ?? []) n += count(t.name) + count(t.description ?? '') + count(JSON.stringify(t.parameters));
  if (req.responseFormat?.type === 'json_schema') n += count(JSON.stringify(req.responseFormat.schema));
  return n;
}
