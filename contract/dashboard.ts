// Schemas of the routes the dashboard calls beyond the public API: the session, the user's own
// API keys and jobs, and the operator's views (admin API).
import { z } from 'zod';
import { prefixedId, storedText } from './common.ts';
import { Job } from './jobs.ts';
import { BudgetAlert, BudgetSettings, KeyLimits, PlanLimits, Totals, isoDate } from './usage.ts';

export const Role = z.enum(['user', 'admin']).meta({ id: 'Role', description: '`admin`: the operator view of the dashboard, and the admin API with the session. Granted with the CLI (`users set-role`).' });

export const CatalogSetup = z
  .object({
    problem: z
      .enum(['no_provider_key', 'no_models_in_config_file'])
      .describe('`no_provider_key`: no config file, and none of the variables in `provider_keys` is set; `no_models_in_config_file`: the config file in use defines no model.'),
    provider_keys: z
      .array(
        z.object({
          provider: z.string().describe('A built-in provider (`openai`, `anthropic`, …).'),
          variable: z.string().describe('The environment variable whose API key enables it, with its default models.'),
        }),
      )
      .describe('Without a config file, each provider whose variable is set when the gateway starts is enabled.'),
    config_file: z
      .object({
        variable: z.string().describe('The environment variable naming a config file (`GATEWAY_CONFIG`).'),
        default_path: z.string().describe('The file read when that variable is unset and the file exists, relative to the directory the gateway starts in.'),
        example: z.string().describe('The example in the distribution that shows every field.'),
      })
      .describe('The alternative: providers, models and plans in a config file.'),
  })
  .meta({ id: 'CatalogSetup', description: 'What enables models on this gateway: the start-up log says the same.' });

export const DashboardSession = z
  .object({
    user: z.object({
      id: z.string(),
      email: z.string().nullable(),
      name: z.string().nullable(),
      username: z.string().nullable(),
      avatar_url: z.string().nullable(),
      plan: z.string(),
      role: Role,
    }),
    csrf_token: z.string().describe('Send as `X-CSRF-Token` on every POST, PATCH and DELETE made with the session cookie.'),
    expires_at: z.string().describe('When the session ends (ISO 8601).'),
    catalog: z
      .object({
        models: z.number().int().describe('How many models the catalog has (`GET /v1/models`).'),
        setup: CatalogSetup.nullable().describe('While the catalog is empty: what the operator sets to give the gateway models; null otherwise.'),
      })
      .describe('The state of this gateway’s catalog, so a page can say why nothing can be called.'),
  })
  .meta({ id: 'DashboardSession', description: 'The signed-in user of the session cookie (`mg_session`, set by /signin).' });

export const ApiKey = z
  .object({
    id: z.string(),
    name: z.string().nullable(),
    prefix: z.string().describe('The first characters of the key, for recognising it; never the key.'),
    created_at: z.string(),
    last_used_at: z.string().nullable().describe('Updated at most every 30 s.'),
    revoked_at: z.string().nullable(),
    limits: KeyLimits.nullable().describe('The key’s live counters (each key has the plan’s limits); null once revoked.'),
    daily_budget_usd: z.string().nullable().describe('This key’s own daily spend cap in US dollars (beside the plan’s per-key budget: the lower binds); null: none.'),
    monthly_budget_usd: z.string().nullable().describe('This key’s own monthly spend cap in US dollars; null: none.'),
  })
  .meta({ id: 'ApiKey', description: 'One of your API keys. Keys an app received through OAuth are listed under connected apps instead.' });

export const CreatedApiKey = ApiKey.extend({ key: z.string().describe('The plaintext key: in this response only; only its hash is stored.') }).meta({ id: 'CreatedApiKey' });

export const CreateApiKeyBody = z.object({ name: storedText(100).trim().min(1).describe('A label, e.g. where the key is used.') }).meta({ id: 'CreateApiKeyBody' });
export const ApiKeyIdParams = z.object({ id: prefixedId('key', 'an API key') });

export const UpdateApiKeyBody = BudgetSettings.refine((b) => b.daily_budget_usd !== undefined || b.monthly_budget_usd !== undefined, {
  message: 'set daily_budget_usd or monthly_budget_usd (null removes one)',
}).meta({ id: 'UpdateApiKeyBody', description: 'Spend caps of one key: they hold beside the plan’s per-key budgets (the lower binds), so they can tighten, not loosen, the plan.' });

export const AdminUpdateApiKeyBody = BudgetSettings.extend({
  capture_bodies: z.boolean().optional().describe('true: the request log keeps this key’s request and response bodies (secrets and media elided, size-capped); false: it stops.'),
})
  .refine((b) => b.daily_budget_usd !== undefined || b.monthly_budget_usd !== undefined || b.capture_bodies !== undefined, {
    message: 'set daily_budget_usd, monthly_budget_usd (null removes one) or capture_bodies',
  })
  .meta({ id: 'AdminUpdateApiKeyBody', description: 'Spend caps of one key (beside the plan’s per-key budgets: the lower binds), and whether the request log keeps its bodies.' });

export const JobListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50).describe('How many, newest first.'),
});
export const JobList = z.object({ object: z.literal('list'), data: z.array(Job) }).meta({ id: 'JobList' });

// ---- admin ----------------------------------------------------------------------------------
export const UserListQuery = z.object({
  q: storedText(320).optional().describe('Only users whose id, email or name contains this (case-insensitive).'),
  limit: z.coerce.number().int().min(1).max(500).default(200),
});

export const UpdateUserBody = z
  .object({
    plan: storedText(64).min(1).optional(),
    disabled: z.boolean().optional().describe('true: the user can no longer sign in, and every key of theirs is refused (within the key-cache TTL).'),
    role: Role.optional(),
    ...BudgetSettings.shape,
  })
  .refine((b) => b.plan !== undefined || b.disabled !== undefined || b.role !== undefined || b.daily_budget_usd !== undefined || b.monthly_budget_usd !== undefined, {
    message: 'set at least one of plan, disabled, role, daily_budget_usd, monthly_budget_usd',
  })
  .meta({ id: 'UpdateUserBody' });

const Counted = z.object({
  requests: z.number().int(),
  errors: z.number().int(),
  billed_tokens: z.number().int(),
  cost: Totals.shape.cost,
  unpriced_requests: Totals.shape.unpriced_requests,
});

export const AdminUsageQuery = z.object({
  start: isoDate.optional().describe('First UTC day (default: 6 days before `end`).'),
  end: isoDate.optional().describe('Last UTC day, inclusive (default: today).'),
  limit: z.coerce.number().int().min(1).max(100).default(10).describe('Length of the top-users and top-models lists.'),
});

export const AdminUsageReport = z
  .object({
    object: z.literal('admin.usage'),
    period: z.object({ start: isoDate, end: isoDate }),
    totals: Totals,
    top_users: z.array(Counted.extend({ user_id: z.string(), email: z.string().nullable() })).describe('By billed tokens, most first.'),
    top_models: z.array(Counted.extend({ model: z.string() })).describe('By billed tokens, most first.'),
    budget_alerts: z.array(BudgetAlert).describe('The latest budget alerts of everyone (at most 50, newest first).'),
    by_day: z.array(Counted.extend({ date: isoDate, users: z.number().int().describe('Distinct users with requests that day.') })),
  })
  .meta({ id: 'AdminUsageReport', description: 'Usage across every user, from the ledger.' });

export const Plan = PlanLimits.extend({
  id: z.string(),
  rank: z.number().int(),
  default: z.boolean().describe('The plan of new users.'),
}).meta({ id: 'Plan' });
