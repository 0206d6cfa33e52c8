import { z } from 'zod';

export const httpsOrDataUrl = z
  .string()
  .regex(/^(https:\/\/\S+|data:[\w.+-]+\/[\w.+-]+(;[\w-]+=[^;,]+)*;base64,[A-Za-z0-9+/=\s]*)$/, {
    message: 'must be an HTTPS URL or a base64 data: URI',
  });

export const ChatUsage = z
  .looseObject({
    prompt_tokens: z.number().int().describe('All input tokens: cache reads and writes, audio and images included.'),
    completion_tokens: z.number().int().describe('All output tokens, reasoning included.'),
    total_tokens: z.number().int(),
    prompt_tokens_details: z
      .looseObject({
        cached_tokens: z.number().int().optional().describe('Read from the prompt cache.'),
        cache_write_tokens: z.number().int().optional().describe('Written to the prompt cache (when there were any).'),
        audio_tokens: z.number().int().optional().describe('Audio input, when the provider reports it.'),
        image_tokens: z.number().int().optional().describe('Image (and video) input, when the provider reports it.'),
      })
      .nullable()
      .optional(),
    completion_tokens_details: z
      .looseObject({
        reasoning_tokens: z.number().int().optional(),
        audio_tokens: z.number().int().optional().describe('Audio output, when the provider reports it.'),
        image_tokens: z.number().int().optional().describe('Image output, when the provider reports it.'),
      })
      .nullable()
      .optional(),
  })
  .meta({ id: 'ChatUsage', description: 'Token counts. Each detail is a part of its total: `prompt_tokens` includes cached and written tokens.' });

export const JsonSchemaObject = z.record(z.string(), z.unknown()).meta({ id: 'JsonSchema', description: 'A JSON Schema object.' });

/** A Unix time in seconds. */
export const unixSeconds = z.number().int();

// ---- Limits on what the gateway stores or looks up ---------------------------------------------
// PostgreSQL text cannot hold NUL, and an unbounded string in a lookup is only cost: fields that
// reach the database are bounded here, so a bad value is a 400 naming the field, never a 500.

/** Deepest JSON nesting a request body may have (objects and arrays); deeper bodies get 400 `nesting_too_deep`. */
export const MAX_JSON_DEPTH = 128;

/** Longest model id accepted: far above any real one. */
const MAX_MODEL_ID = 256;

/** A surrogate that is not half of a pair: a JSON string may hold one (`"\ud800"`), UTF-8 cannot. */
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A client's own request id (`X-Client-Request-Id`, `X-Request-Id`): as OpenAI bounds its own, at most 512 printable ASCII characters. */
export const MAX_CLIENT_REQUEST_ID = 512;
export const CLIENT_REQUEST_ID = /^[\x20-\x7e]+$/;

/** Text the gateway stores or looks up: at most `max` characters, no NUL, no unpaired surrogate. */
export const storedText = (max: number) =>
  z
    .string()
    .max(max)
    .regex(/^[^\u0000]*$/, { message: 'must not contain NUL characters' })
    .refine((s) => !LONE_SURROGATE.test(s), { message: 'must be valid Unicode (an unpaired surrogate is not)' });

/** An id the gateway issued: `<prefix>_` and base62. */
export const prefixedId = (prefix: string, what: string) =>
  z
    .string()
    .max(64)
    .regex(new RegExp(`^${prefix}_[A-Za-z0-9]+$`), { message: `not ${what} id` })
    .describe(`\`${prefix}_\` and letters and digits.`);

/** Characters no model id has: control characters (NUL among them), which no database column or log line should get. */
const MODEL_ID_PATTERN = /^[^\u0000-\u001f\u007f]+$/;

/** Whether a model id as a client sent it can be one (a path's, where no schema reads it): bounded, no control characters. */
export const isModelIdShaped = (s: string) => s.length <= MAX_MODEL_ID && MODEL_ID_PATTERN.test(s) && !LONE_SURROGATE.test(s);

/** A model id as sent by a client: looked up in the catalog; recorded (the request log) only in this shape. */
export const modelId = z
  .string()
  .min(1)
  .max(MAX_MODEL_ID)
  .regex(MODEL_ID_PATTERN, { message: 'must not contain control characters' })
  .refine((s) => !LONE_SURROGATE.test(s), { message: 'must be valid Unicode (an unpaired surrogate is not)' });
