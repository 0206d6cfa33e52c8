// Canonical usage kept consistent: every decoder builds its usage through `clampUsage`, so a part
// is never negative, never a fraction and never larger than the total it is part of, whatever an
// upstream reports; encoders read the uncached input from here. Decisions on which wire field
// means what are in each provider's decoder and in docs/translation.md.
import type * as C from './canonical.ts';

/**
 * A token count as the gateway keeps it: a whole, non-negative number. Upstream answers are
 * unchecked JSON (a server may send null, a string or a fraction), and the ledger stores integers.
 */
export const whole = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);

/** `whole(v)` when the upstream reported the field (null and absent are "not reported"). */
export const reported = (v: unknown): number | undefined => (v === null || v === undefined ? undefined : whole(v));

const OPTIONAL_PARTS = ['cacheWrite1hTokens', 'audioInputTokens', 'imageInputTokens', 'audioOutputTokens', 'imageOutputTokens', 'webSearchCalls'] as const;
type OptionalPart = (typeof OPTIONAL_PARTS)[number];

/** `u` with the optional parts the upstream reported (an undefined one stays absent: "not reported"). */
export function withReported(u: C.Usage, parts: Partial<Record<OptionalPart, number | undefined>>): C.Usage {
  const out: C.Usage = { ...u };
  for (const k of OPTIONAL_PARTS) {
    const v = parts[k];
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/**
 * `u` with every part cut to its total: cache reads to the input, cache writes to what the reads
 * leave of it (they are two disjoint slices of the prompt), 1-hour writes to the writes,
 * audio/image input to the input, reasoning and audio/image output to the output. Providers have
 * reported more cached than prompt tokens, and a part above its total would make a client's
 * uncached input negative and let a token be counted twice. Optional parts stay absent when absent.
 */
export function clampUsage(u: C.Usage): C.Usage {
  const input = whole(u.inputTokens);
  const output = whole(u.outputTokens);
  const cached = Math.min(whole(u.cachedTokens), input);
  const written = Math.min(whole(u.cacheWriteTokens), input - cached);
  const out: C.Usage = { inputTokens: input, outputTokens: output, cachedTokens: cached, cacheWriteTokens: written, reasoningTokens: Math.min(whole(u.reasoningTokens), output) };
  const cap: Record<OptionalPart, number> = {
    cacheWrite1hTokens: written,
    audioInputTokens: input,
    imageInputTokens: input,
    audioOutputTokens: output,
    imageOutputTokens: output,
    webSearchCalls: Number.MAX_SAFE_INTEGER,
  };
  for (const k of OPTIONAL_PARTS) if (u[k] !== undefined) out[k] = Math.min(whole(u[k]), cap[k]);
  return out;
}

/** Input tokens neither read from nor written to the cache (Anthropic's `input_tokens`): never negative. */
export const uncachedInput = (u: C.Usage): number => Math.max(0, u.inputTokens - u.cachedTokens - u.cacheWriteTokens);

/** Of the cache writes, the 5-minute ones (Anthropic's default lifetime): the writes not reported as 1-hour. */
export const cacheWrite5mTokens = (u: C.Usage): number => Math.max(0, u.cacheWriteTokens - (u.cacheWrite1hTokens ?? 0));

/** Two answers' usage as one (the gateway's search rounds): every field summed, an optional one present when either has it. */
export function addUsage(a: C.Usage | null, b: C.Usage | null): C.Usage | null {
  if (!a || !b) return a ?? b;
  const out: C.Usage = {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cachedTokens: a.cachedTokens + b.cachedTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
    reasoningTokens: a.reasoningTokens + b.reasoningTokens,
  };
  for (const k of OPTIONAL_PARTS) if (a[k] !== undefined || b[k] !== undefined) out[k] = (a[k] ?? 0) + (b[k] ?? 0);
  return out;
}
