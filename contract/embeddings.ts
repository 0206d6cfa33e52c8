import { z } from 'zod';
import { modelId } from './common.ts';

export const EmbeddingsRequest = z
  .looseObject({
    model: modelId,
    input: z.union([z.string(), z.array(z.string()).min(1).max(2048)]),
    encoding_format: z.enum(['float', 'base64']).optional().describe('`base64` = little-endian float32, as OpenAI encodes it.'),
    dimensions: z.number().int().min(1).optional(),
  })
  .meta({ id: 'EmbeddingsRequest' });

export const EmbeddingsResponse = z
  .looseObject({
    object: z.literal('list'),
    data: z.array(
      z.looseObject({
        object: z.literal('embedding'),
        index: z.number().int(),
        embedding: z.union([z.array(z.number()), z.string()]),
      }),
    ),
    model: z.string(),
    usage: z.looseObject({ prompt_tokens: z.number().int(), total_tokens: z.number().int() }),
  })
  .meta({ id: 'EmbeddingsResponse' });

export const ModerationRequest = z
  .looseObject({
    model: z
      .enum(['text-moderation-stable', 'text-moderation-latest', 'omni-moderation-latest'])
      .optional()
      .describe('Default omni-moderation-latest.'),
    input: z.union([
      z.string(),
      z.array(z.string()).min(1),
      z
        .array(
          z.discriminatedUnion('type', [
            z.looseObject({ type: z.literal('text'), text: z.string() }),
            z.looseObject({ type: z.literal('image_url'), image_url: z.looseObject({ url: z.string() }) }),
          ]),
        )
        .min(1),
    ]),
  })
  .meta({ id: 'ModerationRequest' });

export const ModerationResponse = z
  .looseObject({
    id: z.string(),
    model: z.string(),
    results: z.array(
      z.looseObject({
        flagged: z.boolean(),
        categories: z.record(z.string(), z.boolean()),
        category_scores: z.record(z.string(), z.number()),
        category_applied_input_types: z.record(z.string(), z.array(z.string())).optional(),
      }),
    ),
  })
  .meta({
    id: 'ModerationResponse',
    description:
      'Category keys: hate, hate/threatening, harassment, harassment/threatening, illicit, illicit/violent, self-harm, self-harm/intent, self-harm/instructions, sexual, sexual/minors, violence, violence/graphic.',
  });
