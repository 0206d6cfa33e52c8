// A request's usage split the way providers bill it: buckets that do not overlap, so that each
// token is weighted (quota) and priced (cost) exactly once (decision 0027). Upstreams report
// totals with parts inside them (canonical.ts `Usage`); this is the one place that subtracts.
import type * as C from '../translate/canonical.ts';
import { whole } from '../translate/usage.ts';

/** Input buckets first, then output buckets; together they hold every token of a usage once. */
export const BUCKETS = [
  'input',
  'cache_read',
  'cache_write',
  'cache_write_1h',
  'audio_input',
  'image_input',
  'output',
  'reasoning',
  'audio_output',
  'image_output',
] as const;
export type Bucket = (typeof BUCKETS)[number];
export type Buckets = Record<Bucket, number>;

/** Takes parts out of a total in order, each cut to what is left of it; `rest` is what remains. */
function parts(total: number) {
  let left = whole(total);
  return {
    take(n: number | undefined) {
      const part = Math.min(whole(n), left);
      left -= part;
      return part;
    },
    get rest() {
      return left;
    },
  };
}

/**
 * Splits a usage into buckets. `input` is the uncached text input and `output` the text output:
 * what is left of each total once its parts are taken out. A part larger than what is left of its
 * total (a provider reporting more cached tokens than prompt tokens) is cut to it, so no bucket
 * is ever negative and the buckets always add up to the totals.
 */
export function bucketsOf(u: C.Usage): Buckets {
  const input = parts(u.inputTokens);
  const cacheRead = input.take(u.cachedTokens);
  const writes = input.take(u.cacheWriteTokens);
  const write1h = Math.min(whole(u.cacheWrite1hTokens), writes);
  const audioIn = input.take(u.audioInputTokens);
  const imageIn = input.take(u.imageInputTokens);
  const output = parts(u.outputTokens);
  const reasoning = output.take(u.reasoningTokens);
  const audioOut = output.take(u.audioOutputTokens);
  const imageOut = output.take(u.imageOutputTokens);
  return {
    input: input.rest,
    cache_read: cacheRead,
    cache_write: writes - write1h,
    cache_write_1h: write1h,
    audio_input: audioIn,
    image_input: imageIn,
    output: output.rest,
    reasoning,
    audio_output: audioOut,
    image_output: imageOut,
  };
}

/** Web searches run by the provider for the answer (priced per call where a price is known). */
export const webSearchCallsOf = (u: C.Usage | null | undefined) => whole(u?.webSearchCalls);

/** Per-bucket quota weights of a model (config `billing.weights`); unset buckets weigh 1. */
export type Weights = Partial<Record<Bucket, number>>;

/**
 * Every bucket's weight: 1 unless set; the 1-hour cache writes weigh what the 5-minute ones do
 * unless set apart (an operator weighting writes means all of them).
 */
export function resolveWeights(w: Weights | null | undefined): Record<Bucket, number> {
  const out = Object.fromEntries(BUCKETS.map((b) => [b, w?.[b] ?? 1])) as Record<Bucket, number>;
  if (w?.cache_write_1h === undefined) out.cache_write_1h = out.cache_write;
  return out;
}

/** Whether every weight is 1: the quota is then the totals' sum, as before weights existed. */
export const isUnweighted = (w: Record<Bucket, number>) => BUCKETS.every((b) => w[b] === 1);
