import { z } from 'zod';
import { prefixedId } from './common.ts';
import { ModelBilling } from './models.ts';

export const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, { message: 'must be a date YYYY-MM-DD' });

export const UsageQuery = z.object({
  start: isoDate.optional().describe('First UTC day of the breakdown (default: 6 days before `end`).'),
  end: isoDate.optional().describe('Last UTC day of the breakdown, inclusive (default: today).'),
  key: prefixedId('key', 'an API key')
    .optional()
    .describe('With the dashboard session: only this key of yours (default: all of them). With an API key: only that key itself may be named.'),
});

const Limit = z.object({
  limit: z.number().int(),
  used: z.number().int(),
  remaining: z.number().int(),
  reset_at: z.string().describe('ISO 8601 UTC time when this counter resets.'),
});

export const Totals = z.object({
  requests: z.number().int(),
  errors: z.number().int().describe('Requests that ended in an error (status 400 or above) among `requests`.'),
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  cached_tokens: z.number().int(),
  reasoning_tokens: z.number().int(),
  billed_tokens: z.number().int().describe('After token_multiplier and surcharges: what counts against the quota.'),
});

export const KeyLimits = z
  .object({
    daily_tokens: Limit.describe('Billed tokens today (UTC), including reservations of requests in flight.'),
    requests_per_minute: Limit.describe('Requests in the current 60-second window, which starts at the first request in it.'),
    concurrent_jobs: z.object({ limit: z.number().int(), active: z.number().int(), remaining: z.number().int() }),
  })
  .meta({ id: 'KeyLimits' });

export const UsageReport = z
  .object({
    object: z.literal('usage'),
    plan: z.object({
      id: z.string(),
      rank: z.number().int(),
      daily_tokens: z.number().int(),
      requests_per_minute: z.number().int(),
      max_concurrent_jobs: z.number().int(),
      premium_models: z
        .array(z.object({ model: z.string(), required_plan: z.string(), allowed: z.boolean() }))
        .describe('The premium models of the catalog, and whether this plan may use them (its rank is at least the required plan’s).'),
    }),
    limits: KeyLimits.describe(
      'The calling key’s counters. With the dashboard session and no `key`: the sums over your active keys (each key has the plan’s limits, so `limit` is the plan’s × their number); `reset_at` is the earliest.',
    ),
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
    by_day: z.array(
      Totals.extend({
        date: isoDate,
        models: z.array(z.object({ model: z.string(), requests: z.number().int(), billed_tokens: z.number().int() })).describe('The day per model (models with requests that day).'),
      }),
    ),
  })
  .meta({
    id: 'UsageReport',
    description: 'For an API key: that key’s plan and counters; for an OAuth access token: the billed user’s key.',
  });
