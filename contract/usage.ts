import { z } from 'zod';
import { ModelBilling } from './models.ts';

const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, { message: 'must be a date YYYY-MM-DD' });

export const UsageQuery = z.object({
  start: isoDate.optional().describe('First UTC day of the breakdown (default: 6 days before `end`).'),
  end: isoDate.optional().describe('Last UTC day of the breakdown, inclusive (default: today).'),
});

const Limit = z.object({
  limit: z.number().int(),
  used: z.number().int(),
  remaining: z.number().int(),
  reset_at: z.string().describe('ISO 8601 UTC time when this counter resets.'),
});

const Totals = z.object({
  requests: z.number().int(),
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  cached_tokens: z.number().int(),
  reasoning_tokens: z.number().int(),
  billed_tokens: z.number().int().describe('After token_multiplier and surcharges: what counts against the quota.'),
});

export const UsageReport = z
  .object({
    object: z.literal('usage'),
    plan: z.object({
      id: z.string(),
      rank: z.number().int(),
      daily_tokens: z.number().int(),
      requests_per_minute: z.number().int(),
      max_concurrent_jobs: z.number().int(),
    }),
    limits: z.object({
      daily_tokens: Limit.describe('Billed tokens today (UTC), including reservations of requests in flight.'),
      requests_per_minute: Limit.describe('Requests in the current 60-second window, which starts at the first request in it.'),
      concurrent_jobs: z.object({ limit: z.number().int(), active: z.number().int(), remaining: z.number().int() }),
    }),
    period: z.object({ start: isoDate, end: isoDate }),
    totals: Totals,
    by_model: z.array(
      Totals.extend({
        model: z.string(),
        metered: z
          .object({
            unit: ModelBilling.shape.unit.exclude(['token']),
            quantity: z.number().describe('Images made, seconds of video, characters spoken or minutes of audio transcribed in the period.'),
          })
          .nullable()
          .describe('Non-token work of this model (see the catalog entry’s `billing`); null for token-billed models.'),
      }),
    ),
    by_day: z.array(Totals.extend({ date: isoDate })),
  })
  .meta({
    id: 'UsageReport',
    description: 'For an API key: that key’s plan and counters; for an OAuth access token: the billed user’s key.',
  });
