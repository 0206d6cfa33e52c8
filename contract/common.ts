import { z } from 'zod';

export const httpsOrDataUrl = z
  .string()
  .regex(/^(https:\/\/\S+|data:[\w.+-]+\/[\w.+-]+(;[\w-]+=[^;,]+)*;base64,[A-Za-z0-9+/=\s]*)$/, {
    message: 'must be an HTTPS URL or a base64 data: URI',
  });

export const ChatUsage = z
  .looseObject({
    prompt_tokens: z.number().int(),
    completion_tokens: z.number().int(),
    total_tokens: z.number().int(),
    prompt_tokens_details: z.looseObject({ cached_tokens: z.number().int().optional() }).nullable().optional(),
    completion_tokens_details: z.looseObject({ reasoning_tokens: z.number().int().optional() }).nullable().optional(),
  })
  .meta({ id: 'ChatUsage', description: 'Token counts. `prompt_tokens` includes cached tokens.' });

export const JsonSchemaObject = z.record(z.string(), z.unknown()).meta({ id: 'JsonSchema', description: 'A JSON Schema object.' });

/** A Unix time in seconds. */
export const unixSeconds = z.number().int();
