// The routes the dashboard calls beyond the public API: its session, the user's own keys and jobs.
// They also answer the user's own API keys (`access: 'account'`), so scripts can manage keys too.
import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { ApiKey, DashboardSession } from '../../contract/dashboard.ts';
import type { Principal } from '../auth/principal.ts';
import type { BudgetSettings } from '../../contract/usage.ts';
import { budgetText } from '../accounts/service.ts';
import { keyLimits } from '../billing/usage-report.ts';
import { catalogSetup } from '../boot/setup.ts';
import { errors } from '../runtime/errors.ts';
import { withOrigin } from '../capabilities/media/generate.ts';
import type { Services } from './services.ts';

type KeyRow = {
  id: string;
  name: string | null;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  dailyBudgetUsd: { toFixed(): string } | null;
  monthlyBudgetUsd: { toFixed(): string } | null;
};

async function keyView(services: Services, owner: Pick<Principal, 'userId' | 'planId'>, k: KeyRow, now: number): Promise<z.infer<typeof ApiKey>> {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    created_at: k.createdAt.toISOString(),
    last_used_at: k.lastUsedAt?.toISOString() ?? null,
    revoked_at: k.revokedAt?.toISOString() ?? null,
    limits: k.revokedAt ? null : await keyLimits(services, { userId: owner.userId, keyId: k.id }, owner.planId, now),
    daily_budget_usd: budgetText(k.dailyBudgetUsd),
    monthly_budget_usd: budgetText(k.monthlyBudgetUsd),
  };
}

export async function sessionInfo(services: Services, request: FastifyRequest, reply: Parameters<Services['sessions']['csrf']>[1]): Promise<z.infer<typeof DashboardSession>> {
  const user = await services.sessions.user(request);
  if (!user) throw errors.unauthenticated('Not signed in, or the session has ended: sign in at /signin.', 'not_signed_in');
  return {
    user: { id: user.id, email: user.email, name: user.name, username: user.username, avatar_url: user.avatarUrl, plan: user.planId, role: user.role },
    csrf_token: services.sessions.csrf(request, reply),
    expires_at: user.expiresAt.toISOString(),
    catalog: { models: services.catalog.entries.length, setup: catalogSetup(services.config) },
  };
}

export async function listKeys(services: Services, principal: Principal) {
  const now = services.clock.now();
  await services.keys.flushLastUsed();
  const rows = await services.accounts.userKeys(principal.userId);
  return { object: 'list' as const, data: await Promise.all(rows.map((k) => keyView(services, principal, k, now))) };
}

export async function createKey(services: Services, principal: Principal, name: string) {
  const { row, key } = await services.accounts.createUserKey({ id: principal.userId, planId: principal.planId }, name);
  return { ...(await keyView(services, principal, row, services.clock.now())), key };
}

export async function revokeKey(services: Services, principal: Principal, id: string) {
  const row = await services.accounts.revokeUserKey(principal.userId, id);
  // This instance refuses the key at once; the others within the key-cache TTL.
  services.keys.invalidateAll();
  return keyView(services, principal, row, services.clock.now());
}

export async function updateKey(services: Services, principal: Principal, id: string, change: z.infer<typeof BudgetSettings>) {
  const row = await services.accounts.setKeyBudgets(id, change, principal.userId);
  // This instance applies the caps at once; the others within the key-cache TTL.
  services.keys.invalidateAll();
  return keyView(services, principal, row, services.clock.now());
}

/** Hosted links in results made absolute, as the job endpoints answer them. */
export async function listJobs(services: Services, principal: Principal, limit: number, origin: string) {
  return (await services.jobs.list(principal, limit)).map((job) => withOrigin(job, origin));
}
