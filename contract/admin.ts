import { z } from 'zod';
import { prefixedId, storedText } from './common.ts';

export const AdminUser = z
  .object({
    id: z.string(),
    email: z.string().nullable(),
    name: z.string().nullable(),
    plan: z.string(),
    created_at: z.string(),
    disabled: z.boolean(),
    role: z.enum(['user', 'admin']),
    daily_budget_usd: z.string().nullable().describe('The user’s own daily spend budget in US dollars, instead of the plan’s `user_daily_budget_usd`; null: the plan’s.'),
    monthly_budget_usd: z.string().nullable().describe('The user’s own monthly spend budget in US dollars, instead of the plan’s `user_monthly_budget_usd`; null: the plan’s.'),
  })
  .meta({ id: 'AdminUser' });

export const AdminApiKey = z
  .object({
    id: z.string(),
    user_id: z.string(),
    name: z.string().nullable(),
    prefix: z.string().describe('The first characters of the key, for recognising it.'),
    kind: z.enum(['standard', 'oauth_grant', 'stable']).describe('standard; oauth_grant: the api_key of an app’s grant (dies with it); stable: retired per-user OAuth keys.'),
    created_at: z.string(),
    last_used_at: z.string().nullable(),
    revoked_at: z.string().nullable(),
    daily_budget_usd: z.string().nullable().describe('The key’s own daily spend cap in US dollars (beside the plan’s per-key budget); null: none.'),
    monthly_budget_usd: z.string().nullable().describe('The key’s own monthly spend cap in US dollars; null: none.'),
    capture_bodies: z.boolean().describe('The request log keeps this key’s request and response bodies (`request_log.capture_bodies` keeps every key’s).'),
  })
  .meta({ id: 'AdminApiKey' });

export const AdminCreatedApiKey = AdminApiKey.extend({
  key: z.string().describe('The plaintext key. Shown once; only its hash is stored.'),
}).meta({ id: 'AdminCreatedApiKey' });

export const CreateUserBody = z.object({
  email: z.email().max(320),
  name: storedText(200).min(1).optional(),
  plan: storedText(64).min(1).optional().describe('Plan id; default: the configured default plan.'),
});


export const CreateKeyBody = z.object({
  user: storedText(320).min(1).describe('User id or email.'),
  name: storedText(200).min(1).optional(),
});

export const UserRef = z.object({ user: storedText(320).min(1).describe('User id or email.') });
export const KeyRef = z.object({ id: prefixedId('key', 'an API key') });
export const KeyListQuery = z.object({ user: storedText(320).optional().describe('Only this user’s keys (id or email).') });

export const SetPasswordBody = z.object({
  password: z
    .string()
    .max(4096)
    .describe('The new password: 10–256 characters, not one repeated character, not a common password, not containing the email’s name (the sign-up rules; 400 weak_password says which).'),
});

export const PasswordSet = z
  .object({
    user: AdminUser,
    sessions_ended: z.number().int().describe('Dashboard sessions of the user that ended with the change.'),
  })
  .meta({ id: 'PasswordSet' });

export const ResetLinkBody = z.object({
  expires_in_minutes: z.number().int().min(5).max(10_080).default(1440).describe('How long the link works: 5 minutes to 7 days; default 1 day.'),
});

export const PasswordResetLink = z
  .object({
    user_id: z.string(),
    email: z.string().nullable(),
    url: z
      .string()
      .describe('The single-use link, on the gateway’s public_url (else the address it listens on). Hand it to the user only: whoever opens it can set the password.'),
    expires_at: z.string(),
  })
  .meta({ id: 'PasswordResetLink' });
