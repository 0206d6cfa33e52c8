// User and key administration, shared by the admin API and the CLI's direct-database mode.
import type { z } from 'zod';
import type { AdminApiKey, AdminCreatedApiKey, AdminUser, PasswordResetLink, PasswordSet } from '../../contract/admin.ts';
import type { BudgetSettings } from '../../contract/usage.ts';
import type { ResolvedConfig } from '../config/schema.ts';
import type { PrismaClient } from '../db/client.ts';
import { errors } from '../runtime/errors.ts';
import { displayPrefix, hashSecret, newApiKey, newId } from '../runtime/secrets.ts';
import { planOf } from '../billing/plans.ts';
import { GRANT_KEY_KIND } from '../oauth/service.ts';
import { systemClock, type Clock } from '../runtime/clock.ts';
import { Passwords } from './passwords.ts';

type User = z.infer<typeof AdminUser>;
type Key = z.infer<typeof AdminApiKey>;

/** A stored budget (a decimal, or null) as the API shows it. */
export const budgetText = (v: { toFixed(): string } | null) => (v === null ? null : v.toFixed());
type StoredBudgets = { dailyBudgetUsd: { toFixed(): string } | null; monthlyBudgetUsd: { toFixed(): string } | null };
/** A change of budgets for the database: a string sets one, null removes it, absent leaves it. */
const budgetChange = (c: z.infer<typeof BudgetSettings>) => ({ dailyBudgetUsd: c.daily_budget_usd, monthlyBudgetUsd: c.monthly_budget_usd });

const userView = (u: { id: string; email: string | null; name: string | null; planId: string; createdAt: Date; disabledAt: Date | null; role: string } & StoredBudgets): User => ({
  id: u.id,
  email: u.email,
  name: u.name,
  plan: u.planId,
  created_at: u.createdAt.toISOString(),
  disabled: u.disabledAt !== null,
  role: u.role === 'admin' ? 'admin' : 'user',
  daily_budget_usd: budgetText(u.dailyBudgetUsd),
  monthly_budget_usd: budgetText(u.monthlyBudgetUsd),
});

/** The user's API keys that count against `max_keys`: not revoked, not a connected app's. */
const activeKeysOf = (userId: string) => ({ userId, kind: { not: GRANT_KEY_KIND }, revokedAt: null });

const keyView = (k: {
  id: string;
  userId: string;
  name: string | null;
  prefix: string;
  kind: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  captureBodies: boolean;
} & StoredBudgets): Key => ({
  id: k.id,
  user_id: k.userId,
  name: k.name,
  prefix: k.prefix,
  kind: k.kind === GRANT_KEY_KIND || k.kind === 'stable' ? k.kind : 'standard',
  created_at: k.createdAt.toISOString(),
  last_used_at: k.lastUsedAt?.toISOString() ?? null,
  revoked_at: k.revokedAt?.toISOString() ?? null,
  daily_budget_usd: budgetText(k.dailyBudgetUsd),
  monthly_budget_usd: budgetText(k.monthlyBudgetUsd),
  capture_bodies: k.captureBodies,
});

export class AccountService {
  private readonly passwords: Passwords;
  constructor(
    private readonly prisma: PrismaClient,
    private readonly config: Pick<ResolvedConfig, 'plans' | 'defaultPlan'> & { auth?: Pick<ResolvedConfig['auth'], 'local'> },
    clock: Clock = systemClock(),
  ) {
    this.passwords = new Passwords(prisma, clock);
  }

  private checkPlan(plan: string): string {
    if (!this.config.plans.some((p) => p.id === plan)) {
      throw errors.invalid(`Unknown plan '${plan}'. Plans: ${this.config.plans.map((p) => p.id).join(', ')}.`, 'plan');
    }
    return plan;
  }

  private async findUser(ref: string) {
    const user = await this.prisma.user.findFirst({ where: ref.includes('@') ? { email: ref.toLowerCase() } : { id: ref } });
    if (!user) throw errors.notFound(`No user '${ref}'.`, 'user_not_found', 'user');
    return user;
  }

  async createUser(input: { email: string; name?: string; plan?: string }): Promise<User> {
    const plan = this.checkPlan(input.plan ?? this.config.defaultPlan);
    const email = input.email.toLowerCase();
    if (await this.prisma.user.findUnique({ where: { email } })) {
      throw errors.conflict(`A user with email '${email}' already exists.`, 'user_exists', 'email');
    }
    try {
      const user = await this.prisma.user.create({ data: { id: newId('usr'), email, name: input.name ?? null, planId: plan } });
      return userView(user);
    } catch (err) {
      if ((err as { code?: string }).code === 'P2002') throw errors.conflict(`A user with email '${email}' already exists.`, 'user_exists', 'email');
      throw err;
    }
  }

  async listUsers(query: { q?: string; limit?: number } = {}): Promise<User[]> {
    const q = query.q?.trim();
    const contains = (field: 'id' | 'email' | 'name') => ({ [field]: { contains: q, mode: 'insensitive' as const } });
    const users = await this.prisma.user.findMany({
      where: q ? { OR: [contains('id'), contains('email'), contains('name')] } : {},
      orderBy: { createdAt: 'asc' },
      take: query.limit,
    });
    return users.map(userView);
  }

  /**
   * Plan, role and disabling in one change. `actor` (an admin user acting through the dashboard)
   * cannot disable or demote themselves: that would lock the last admin out of the operator view.
   */
  async updateUser(ref: string, change: { plan?: string; disabled?: boolean; role?: 'user' | 'admin' } & z.infer<typeof BudgetSettings>, actor?: string): Promise<User> {
    if (change.plan !== undefined) this.checkPlan(change.plan);
    const user = await this.findUser(ref);
    if (actor === user.id && (change.disabled === true || change.role === 'user')) {
      throw errors.invalid('You cannot disable or demote yourself; ask another admin, or use the CLI.', change.disabled ? 'disabled' : 'role', 'cannot_change_self');
    }
    const disabledAt = change.disabled === undefined ? undefined : change.disabled ? (user.disabledAt ?? new Date()) : null;
    const updated = await this.prisma.user.update({ where: { id: user.id }, data: { planId: change.plan, role: change.role, disabledAt, ...budgetChange(change) } });
    // A disabled user's dashboard sessions end with it.
    if (change.disabled) await this.prisma.webSession.deleteMany({ where: { userId: user.id } });
    return userView(updated);
  }

  /** A password is of use only while password sign-in is on. */
  private checkLocalSignIn(): void {
    if (this.config.auth?.local.enabled === false) {
      throw errors.conflict('Password sign-in is off on this gateway (auth.local.enabled: false): a password could not be used. Turn it on in the config first.', 'password_signin_disabled');
    }
  }

  /** Sets a user's password (sign-up's rules) and ends the user's sessions. */
  async setPassword(ref: string, password: string): Promise<z.infer<typeof PasswordSet>> {
    this.checkLocalSignIn();
    const user = await this.findUser(ref);
    const ended = await this.passwords.set(user, password);
    return { user: userView(user), sessions_ended: ended };
  }

  /**
   * A single-use link that lets the user choose a password, on `baseUrl` (public_url, else the
   * gateway's listening address). A disabled user could not sign in with it: refused.
   */
  async createResetLink(ref: string, input: { expiresInMinutes: number; baseUrl: string }): Promise<z.infer<typeof PasswordResetLink>> {
    this.checkLocalSignIn();
    const user = await this.findUser(ref);
    if (user.disabledAt) throw errors.conflict(`User '${ref}' is disabled, so a new password would not let them in: enable the user first (users enable).`, 'user_disabled', 'user');
    const link = await this.passwords.createLink(user, input.expiresInMinutes, 'operator', input.baseUrl);
    return { user_id: user.id, email: user.email, url: link.url, expires_at: link.expiresAt.toISOString() };
  }

  async createKey(input: { user: string; name?: string }): Promise<z.infer<typeof AdminCreatedApiKey>> {
    const user = await this.findUser(input.user);
    const { row, key } = await this.insertKey(user, input.name ?? null, `User '${input.user}' has`);
    return { ...keyView(row), key };
  }

  /**
   * A new key for the user, within the plan's `max_keys` (keys of connected apps and revoked keys
   * do not count). The user's row is locked while the keys are counted, so two creations at once
   * — on one instance or several — cannot both take the last place.
   */
  private insertKey(user: { id: string; planId: string }, name: string | null, who: string) {
    return this.prisma.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT id FROM users WHERE id = ${user.id} FOR UPDATE`;
      const active = await tx.apiKey.count({ where: activeKeysOf(user.id) });
      const plan = planOf(this.config, user.planId);
      if (active >= plan.max_keys) {
        throw errors.forbidden('too_many_keys', `${who} ${active} active API keys, the most the '${plan.id}' plan allows (max_keys ${plan.max_keys}): revoke one first.`);
      }
      const key = newApiKey();
      const row = await tx.apiKey.create({ data: { id: newId('key'), userId: user.id, name, prefix: displayPrefix(key), hash: hashSecret(key) } });
      return { row, key };
    });
  }

  async listKeys(userRef?: string): Promise<Key[]> {
    const where = userRef ? { userId: (await this.findUser(userRef)).id } : {};
    const keys = await this.prisma.apiKey.findMany({ where, orderBy: { createdAt: 'asc' } });
    return keys.map(keyView);
  }

  /** How many API keys the user holds now (not revoked; keys of connected apps do not count). */
  activeKeyCount(userId: string): Promise<number> {
    return this.prisma.apiKey.count({ where: activeKeysOf(userId) });
  }

  /** A user's own keys (not those of their connected apps), newest first. */
  async userKeys(userId: string) {
    return this.prisma.apiKey.findMany({ where: { userId, kind: { not: GRANT_KEY_KIND } }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
  }

  async createUserKey(user: { id: string; planId: string }, name: string) {
    return this.insertKey(user, name, 'You have');
  }

  /** Revokes the user's own key; another user's key is as unknown as a missing one. */
  async revokeUserKey(userId: string, id: string) {
    const key = await this.prisma.apiKey.findUnique({ where: { id } });
    if (!key || key.userId !== userId || key.kind === GRANT_KEY_KIND) throw errors.notFound(`No API key '${id}'.`, 'key_not_found', 'id');
    if (key.revokedAt) return key;
    return this.prisma.apiKey.update({ where: { id }, data: { revokedAt: new Date() } });
  }

  /** Sets or removes a key's own spend caps: the user's own key (`userId`), or any key (the operator). */
  async setKeyBudgets(id: string, change: z.infer<typeof BudgetSettings>, userId?: string) {
    const key = await this.prisma.apiKey.findUnique({ where: { id } });
    if (!key || (userId !== undefined && (key.userId !== userId || key.kind === GRANT_KEY_KIND))) throw errors.notFound(`No API key '${id}'.`, 'key_not_found', 'id');
    return this.prisma.apiKey.update({ where: { id }, data: budgetChange(change) });
  }

  /** An operator's change: spend caps, and whether the request log keeps the key's bodies. */
  async updateKey(id: string, change: z.infer<typeof BudgetSettings> & { capture_bodies?: boolean }): Promise<Key> {
    const { capture_bodies, ...budgets } = change;
    const key = await this.setKeyBudgets(id, budgets);
    return keyView(capture_bodies === undefined ? key : await this.prisma.apiKey.update({ where: { id }, data: { captureBodies: capture_bodies } }));
  }

  async revokeKey(id: string): Promise<Key> {
    const key = await this.prisma.apiKey.findUnique({ where: { id } });
    if (!key) throw errors.notFound(`No API key '${id}'.`, 'key_not_found', 'id');
    if (key.revokedAt) return keyView(key);
    return keyView(await this.prisma.apiKey.update({ where: { id }, data: { revokedAt: new Date() } }));
  }
}

