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
  billed_tokens: z.number().int().describe('After bucket weights, token_multiplier and surcharges: what counts against the quota.'),
  cache_write_tokens: z.number().int().describe('Input tokens written to the prompt cache (all lifetimes), among `prompt_tokens`.'),
  cache_write_1h_tokens: z.number().int().describe('Of `cache_write_tokens`, those written to a 1-hour cache.'),
  audio_input_tokens: z.number().int().describe('Audio tokens among `prompt_tokens`.'),
  image_input_tokens: z.number().int().describe('Image tokens among `prompt_tokens`.'),
  audio_output_tokens: z.number().int().describe('Audio tokens among `completion_tokens`.'),
  image_output_tokens: z.number().int().describe('Image tokens among `completion_tokens`.'),
  web_search_calls: z.number().int().describe('Web searches run by the providers.'),
  cost: z
    .string()
    .nullable()
    .describe('US dollars, a decimal string: the sum of the requests whose cost is known. null when none of them has one (their model has no known price).'),
  unpriced_requests: z.number().int().describe('Requests whose cost is unknown (a price they needed is not known): not in `cost`.'),
});

/** A spend budget in US dollars: a decimal string, more than 0 and at most 1,000,000. */
export const UsdBudget = z
  .string()
  .regex(/^\d{1,7}(\.\d{1,9})?$/, { message: 'US dollars as a decimal string such as "25" or "12.50"' })
  .refine((v) => Number(v) > 0 && Number(v) <= 1e6, { message: 'a budget between 0 and 1,000,000 US dollars' });

/** Budgets set on one key or one user: a decimal string sets it, null removes it, absent leaves it. */
export const BudgetSettings = z.object({
  daily_budget_usd: UsdBudget.nullable().optional().describe('US dollars per UTC day; null: none of its own.'),
  monthly_budget_usd: UsdBudget.nullable().optional().describe('US dollars per UTC calendar month; null: none of its own.'),
});

const Budget = z
  .object({
    limit_usd: z.string(),
    spent_usd: z.string().describe('Settled spend plus the most the requests in flight can cost.'),
    remaining_usd: z.string(),
    reset_at: z.string().describe('ISO 8601 UTC: the end of the day or month.'),
  })
  .nullable();

export const Budgets = z
  .object({
    key: z.object({ daily: Budget, monthly: Budget }).describe('The key’s budgets (with the dashboard session and no `key`: summed over your active keys); null where the plan sets none.'),
    user: z.object({ daily: Budget, monthly: Budget }).describe('Your budgets over all your keys and apps; null where the plan sets none.'),
  })
  .meta({ id: 'Budgets', description: 'Spend budgets in US dollars (plan `daily_budget_usd`, `monthly_budget_usd`, `user_daily_budget_usd`, `user_monthly_budget_usd`), per UTC day and calendar month.' });

export const KeyLimits = z
  .object({
    daily_tokens: Limit.describe('Billed tokens today (UTC), including reservations of requests in flight.'),
    requests_per_minute: Limit.describe('Requests in the current 60-second window, which starts at the first request in it.'),
    concurrent_jobs: z.object({ limit: z.number().int(), active: z.number().int(), remaining: z.number().int() }),
  })
  .meta({ id: 'KeyLimits' });

export const UserLimits = z
  .object({
    daily_tokens: Limit.nullable().describe(
      'Billed tokens today (UTC) over all your keys and connected apps, revoked keys included; null when the plan sets no `user_daily_tokens`.',
    ),
    requests_per_minute: Limit.nullable().describe('Requests in the current 60-second window over all your keys and apps; null when the plan sets no `user_requests_per_minute`.'),
    concurrent_jobs: z
      .object({ limit: z.number().int(), active: z.number().int(), remaining: z.number().int() })
      .nullable()
      .describe('Active async jobs over all your keys and apps; null when the plan sets no `user_max_concurrent_jobs`.'),
    keys: z.object({ limit: z.number().int(), active: z.number().int(), remaining: z.number().int() }).describe('Active API keys against the plan’s `max_keys`.'),
  })
  .meta({ id: 'UserLimits', description: 'Your counters over all your API keys and connected apps together, against the plan’s per-user limits.' });

/** A plan's limits: those of each key (and each OAuth grant), and those of a user over all of them. */
export const PlanLimits = z.object({
  daily_tokens: z.number().int().describe('Billed tokens per UTC day, per key.'),
  requests_per_minute: z.number().int().describe('Per key.'),
  max_concurrent_jobs: z.number().int().describe('Active async jobs per key.'),
  user_daily_tokens: z.number().int().nullable().describe('Billed tokens per UTC day over all of a user’s keys and connected apps; null: no such limit.'),
  user_requests_per_minute: z.number().int().nullable().describe('Over all of a user’s keys and apps; null: no such limit.'),
  user_max_concurrent_jobs: z.number().int().nullable().describe('Over all of a user’s keys and apps; null: no such limit.'),
  max_keys: z.number().int().describe('API keys a user may hold at once (revoked ones do not count).'),
  daily_budget_usd: z.string().nullable().describe('US dollars a key may spend per UTC day; null: no budget.'),
  monthly_budget_usd: z.string().nullable().describe('US dollars a key may spend per UTC calendar month; null: no budget.'),
  user_daily_budget_usd: z.string().nullable().describe('US dollars a user may spend per UTC day over all keys and apps; null: no budget.'),
  user_monthly_budget_usd: z.string().nullable().describe('US dollars a user may spend per UTC calendar month over all keys and apps; null: no budget.'),
});

export const BudgetAlert = z
  .object({
    id: z.string(),
    scope: z.enum(['key', 'user']),
    key_id: z.string().nullable(),
    user_id: z.string(),
    period: z.enum(['daily', 'monthly']),
    period_start: z.string().describe('YYYY-MM-DD (daily) or YYYY-MM (monthly), UTC.'),
    threshold_percent: z.number().int(),
    limit_usd: z.string(),
    spent_usd: z.string().describe('What had been spent when the threshold was crossed.'),
    created_at: z.string(),
    delivery: z.enum(['pending', 'delivered', 'failed', 'disabled']).describe('Of the operator’s webhook; `disabled`: none is configured.'),
    attempts: z.number().int(),
    delivered_at: z.string().nullable(),
  })
  .meta({ id: 'BudgetAlert', description: 'A spend budget crossed one of the operator’s alert thresholds (once per threshold per period).' });

export const UsageReport = z
  .object({
    object: z.literal('usage'),
    plan: PlanLimits.extend({
      id: z.string(),
      rank: z.number().int(),
      premium_models: z
        .array(z.object({ model: z.string(), required_plan: z.string(), allowed: z.boolean() }))
        .describe('The premium models of the catalog, and whether this plan may use them (its rank is at least the required plan’s).'),
    }),
    limits: KeyLimits.extend({ user: UserLimits })
      .describe(
        'The calling key’s counters (an OAuth access token: its grant’s). With the dashboard session and no `key`: the sums over your active keys (each key has the plan’s limits, so `limit` is the plan’s × their number); `reset_at` is the earliest. `user`: your counters over all keys and apps together, against the plan’s per-user limits; a request must fit both.',
      ),
    budgets: Budgets,
    budget_alerts: z.array(BudgetAlert).describe('Your latest budget alerts (at most 20, newest first): of your keys and of you.'),
    period: z.object({ start: isoDate, end: isoDate }),
    totals: Totals,
    by_key: z.array(Totals.extend({ key_id: z.string() })).describe('The period per API key (keys with requests in it).'),
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
        models: z.array(Totals.extend({ model: z.string() })).describe('The day per model (models with requests that day).'),
      }),
    ),
  })
  .meta({
    id: 'UsageReport',
    description: 'For an API key: that key’s plan and counters; for an OAuth access token: the billed user’s key.',
  });
