import type * as C from '../translate/canonical.ts';

/** ~4 characters per token: the usual rough rule, used only when an upstream reports nothing. */
const CHARS_PER_TOKEN = 4;

export function estimatePromptTokens(req: C.Request): number {
  let chars = req.system.join('').length;
  for (const m of req.messages) {
    for (const p of m.content) {
      if (p.type === 'text' || p.type === 'reasoning') chars += p.text.length;
      else if (p.type === 'tool_call') chars += p.name.length + p.arguments.length;
      else if (p.type === 'tool_result') chars += p.content.reduce((n, c) => n + (c.type === 'text' ? c.text.length : 0), 0);
      else chars += 85 * CHARS_PER_TOKEN; // a low-detail image
    }
  }
  if (req.tools) chars += JSON.stringify(req.tools).length;
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

export function estimateOutputTokens(content: C.Response['content']): number {
  let chars = 0;
  for (const p of content) chars += p.type === 'tool_call' ? p.name.length + p.arguments.length : p.text.length;
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/** Output tokens reserved when neither the request nor the model config names a maximum. */
export const DEFAULT_RESERVED_OUTPUT = 4096;

/** The most a text request can use (its reservation, before the multiplier): its prompt, and the most output it allows. */
export function textEstimate(req: C.Request, model: { max_output_tokens?: number | null } | undefined): { input: number; output: number } {
  return { input: estimatePromptTokens(req), output: req.maxTokens ?? model?.max_output_tokens ?? DEFAULT_RESERVED_OUTPUT };
}

/** Texts' input tokens by the same rule (embeddings, moderation): what is reserved and, unreported, billed. */
export const estimateTextTokens = (texts: string[]) => Math.ceil(texts.reduce((n, t) => n + t.length, 0) / CHARS_PER_TOKEN);
