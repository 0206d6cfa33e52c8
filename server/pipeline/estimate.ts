// Token counts the gateway works out itself: the rough estimate it bills when an upstream reports
// nothing, and the reservation (the hold) a text request is admitted under, which for everything
// but text is an upper bound of what a provider can bill (docs/billing.md "What a hold bounds").
import type * as C from '../translate/canonical.ts';
import { imageSize } from '../media/image-header.ts';
import { wavSeconds } from '../media/wav-header.ts';
import { anyImageTokens } from '../providers/registry.ts';
import type { ImageTokenRule } from '../providers/manifest.ts';

/** ~4 characters per token: the usual rough rule for text (an estimate, not a bound). */
const CHARS_PER_TOKEN = 4;

/**
 * Audio tokens a second, the most a provider documents: Gemini's 32 (OpenAI's audio models count
 * about 10). Holds of audio of known length are sized by it.
 */
export const AUDIO_TOKENS_PER_SECOND = 32;

/** What an image counts in the rough estimate (a low-detail image at OpenAI), and in a hold's admission when its size is unknown. */
const ROUGH_IMAGE_TOKENS = 85;

/**
 * The rough estimate of a request's prompt, billed only when an upstream reports no usage (and
 * used for cache affinity's minimum length): text at ~4 characters a token, an image as 85 tokens
 * (a low-detail image at OpenAI). Not a bound: holds use `promptTokensBound`.
 */
export function estimatePromptTokens(req: C.Request): number {
  let chars = req.system.join('').length;
  for (const m of req.messages) {
    for (const p of m.content) {
      if (p.type === 'text' || p.type === 'reasoning') chars += p.text.length;
      else if (p.type === 'tool_call') chars += p.name.length + p.arguments.length;
      else if (p.type === 'tool_result') chars += p.content.reduce((n, c) => n + (c.type === 'text' ? c.text.length : 0), 0);
      else chars += ROUGH_IMAGE_TOKENS * CHARS_PER_TOKEN; // a low-detail image
    }
  }
  if (req.tools) chars += JSON.stringify(req.tools).length;
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/**
 * The most a request's prompt can be billed, as far as the gateway can tell before sending it:
 * `tokens` bounds every input but text (still ~4 characters a token) and images of unknown size,
 * which count `ROUGH_IMAGE_TOKENS` there and the rest of their bound in `unsized`: the request is
 * admitted on `tokens` and holds `tokens + unsized` when that fits, else all that remains
 * (QuotaBilling.reserve), so a URL image's bound (tens of thousands of tokens at some vendors)
 * never refuses a request that has room for a usual one. `unbounded` when the request also carries
 * input nothing bounds (a document, compressed audio, video, content the provider keeps): its hold
 * is then sized by the model's context window, or holds all that remains.
 *
 * - An image: the most `imageTokens` gives for its size, read from the header of inline bytes
 *   (PNG, JPEG, GIF, WebP), and its detail (`low` or not); any size when it is given by URL or
 *   file id, or its header cannot be read (in `unsized`).
 * - Inline WAV audio of uncompressed samples: its seconds (its bytes over its byte rate) ×
 *   AUDIO_TOKENS_PER_SECOND.
 * - Text-like input only the client format's upstreams read (a text document, an earlier server
 *   tool's result): its length, as text.
 *
 * Text-only requests pay for nothing more than the estimate did: one pass over the parts, lengths only.
 */
export function promptTokensBound(req: C.Request, imageTokens: ImageTokenRule = anyImageTokens): { tokens: number; unsized: number; unbounded: boolean } {
  let chars = 0;
  let tokens = 0;
  let unsized = 0;
  let unbounded = false;
  const image = (source: C.ImageSource | null, detail: string | undefined) => {
    const size = source?.kind === 'base64' ? imageSize(source.data) : null;
    const bound = imageTokens(size, detail === 'low' ? 'low' : 'high');
    if (size) tokens += bound;
    else {
      tokens += Math.min(bound, ROUGH_IMAGE_TOKENS);
      unsized += Math.max(0, bound - ROUGH_IMAGE_TOKENS);
    }
  };
  for (const s of req.system) chars += s.length;
  for (const m of req.messages) {
    for (const p of m.content) {
      if (p.type === 'text' || p.type === 'reasoning') chars += p.text.length;
      else if (p.type === 'tool_call') chars += p.name.length + p.arguments.length;
      else if (p.type === 'tool_result') {
        for (const c of p.content) {
          if (c.type === 'text') chars += c.text.length;
          else image(c.source, c.detail);
        }
      } else image(p.source, p.detail);
    }
  }
  if (req.tools) chars += JSON.stringify(req.tools).length;
  if (req.opaque) {
    for (const o of req.opaque) {
      if (o.kind === 'text') chars += o.chars;
      else if (o.kind === 'image') image(o.source, o.detail);
      else if (o.kind === 'media') {
        const seconds = audioSeconds(o);
        if (seconds === null) unbounded = true;
        else tokens += Math.ceil(seconds) * AUDIO_TOKENS_PER_SECOND;
      } else unbounded = true;
    }
  }
  return { tokens: Math.ceil(chars / CHARS_PER_TOKEN) + tokens, unsized, unbounded };
}

/** Seconds of inline audio whose length its bytes bound (uncompressed WAV), else null. */
function audioSeconds(o: { mediaType?: string; data?: string }): number | null {
  if (o.data === undefined) return null;
  const type = o.mediaType?.toLowerCase();
  // Gemini's audio/wav, and the names other clients give WAV; the header decides.
  if (type !== undefined && type !== 'audio/wav' && type !== 'audio/x-wav' && type !== 'audio/wave' && type !== 'audio/vnd.wave') return null;
  return wavSeconds(o.data);
}

export function estimateOutputTokens(content: C.Response['content']): number {
  let chars = 0;
  for (const p of content) chars += p.type === 'tool_call' ? p.name.length + p.arguments.length : p.text.length;
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/** Output tokens reserved when neither the request nor the model config names a maximum. */
export const DEFAULT_RESERVED_OUTPUT = 4096;

/**
 * The most a text request can use (its reservation, before the multiplier): its prompt's bound and
 * the most output it allows. `mostInput` is set when part of the prompt is bounded only beyond what
 * admits it: images of unknown size (their whole bound), or input nothing bounds (the model's
 * context window: no provider bills a prompt longer than the model takes; Infinity when the catalog
 * does not know it).
 */
export function textEstimate(
  req: C.Request,
  model: { max_output_tokens?: number | null } | undefined,
  opts: { imageTokens?: ImageTokenRule; contextWindow?: number | null } = {},
): { input: number; output: number; mostInput?: number } {
  const bound = promptTokensBound(req, opts.imageTokens);
  const output = req.maxTokens ?? model?.max_output_tokens ?? DEFAULT_RESERVED_OUTPUT;
  if (bound.unbounded) return { input: bound.tokens, output, mostInput: opts.contextWindow ? Math.max(bound.tokens + bound.unsized, opts.contextWindow) : Infinity };
  if (bound.unsized) return { input: bound.tokens, output, mostInput: bound.tokens + bound.unsized };
  return { input: bound.tokens, output };
}

/** Texts' input tokens by the same rule (embeddings, moderation): what is reserved and, unreported, billed. */
export const estimateTextTokens = (texts: string[]) => Math.ceil(texts.reduce((n, t) => n + t.length, 0) / CHARS_PER_TOKEN);
