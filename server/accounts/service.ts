// User and key administration, shared by the admin API and the CLI's direct-database mode.
import type { z } from 'zod';
import type { AdminApiKey, AdminCreatedApiKey, AdminUser } from '../../contract/admin.ts';
import type { ResolvedConfig } from '../config/schema.ts';
import type { PrismaClient } from '../db/client.ts';
import { errors } from '../http/errors.ts';
import { displayPrefix, hashSecret, newApiKey, newId } from '../auth/secrets.ts';
import { GRANT_KEY_KIND } from '../oauth/service.ts';

type User = z.infer<typeof AdminUser>;
type Key = z.infer<typeof AdminApiKey>;

const userView = (u: { id: string; email: string | null; name: string | null; planId: string; createdAt: Date; disabledAt: Date | null; role: string }): User => ({
  id: u.id,
  email: u.email,
  name: u.name,
  plan: u.planId,
  created_at: u.createdAt.toISOString(),
  disabled: u.disabledAt !== null,
  role: u.role === 'admin' ? 'admin' : 'user',
});

/** Active keys a user may hold at once (keys of connected apps not counted). */
export const MAX_KEYS_PER_USER = 50;

const keyView = (k: {
  id: string;
  userId: string;
  name: string | null;
  prefix: string;
  kind: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}): Key => ({
  id: k.id,
  user_id: k.userId,
  name: k.name,
  prefix: k.prefix,
  kind: k.kind === GRANT_KEY_KIND || k.kind === 'stable' ? k.kind : 'standard',
  created_at: k.createdAt.toISOString(),
  last_used_at: k.lastUsedAt?.toISOString() ?? null,
  revoked_at: k.revokedAt?.toISOString() ?? null,
});

export class AccountService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly config: Pick<ResolvedConfig, 'plans' | 'defaultPlan'>,
  ) {}

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
  async updateUser(ref: string, change: { plan?: string; disabled?: boolean; role?: 'user' | 'admin' }, actor?: string): Promise<User> {
    if (change.plan !== undefined) this.checkPlan(change.plan);
    const user = await this.findUser(ref);
    if (actor === user.id && (change.disabled === true || change.role === 'user')) {
      throw errors.invalid('You cannot disable or demote yourself; ask another admin, or use the CLI.', change.disabled ? 'disabled' : 'role', 'cannot_change_self');
    }
    const disabledAt = change.disabled === undefined ? undefined : change.disabled ? (user.disabledAt ?? new Date()) : null;
    const updated = await this.prisma.user.update({ where: { id: user.id }, data: { planId: change.plan, role: change.role, disabledAt } });
    // A disabled user's dashboard sessions end with it.
    if (change.disabled) await this.prisma.webSession.deleteMany({ where: { userId: user.id } });
    return userView(updated);
  }

  async createKey(input: { user: string; name?: string }): Promise<z.infer<typeof AdminCreatedApiKey>> {
    const user = await this.findUser(input.user);
    const key = newApiKey();
    const row = await this.prisma.apiKey.create({
      data: { id: newId('key'), userId: user.id, name: input.name ?? null, prefix: displayPrefix(key), hash: hashSecret(key) },
    });
    return { ...keyView(row), key };
  }

  async listKeys(userRef?: string): Promise<Key[]> {
    const where = userRef ? { userId: (await this.findUser(userRef)).id } : {};
    const keys = await this.prisma.apiKey.findMany({ where, orderBy: { createdAt: 'asc' } });
    return keys.map(keyView);
  }

  /** A user's own keys (not those of their connected apps), newest first. */
  async userKeys(userId: string) {
    return this.prisma.apiKey.findMany({ where: { userId, kind: { not: GRANT_KEY_KIND } }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
  }

  async createUserKey(userId: string, name: string) {
    const active = await this.prisma.apiKey.count({ where: { userId, kind: { not: GRANT_KEY_KIND }, revokedAt: null } });
    if (active >= MAX_KEYS_PER_USER) throw errors.forbidden('too_many_keys', `You have ${MAX_KEYS_PER_USER} active keys, the most a user may hold: revoke one first.`);
    const key = newApiKey();
    const row = await this.prisma.apiKey.create({ data: { id: newId('key'), userId, name, prefix: displayPrefix(key), hash: hashSecret(key) } });
    return { row, key };
  }

  /** Revokes the user's own key; another user's key is as unknown as a missing one. */
  async revokeUserKey(userId: string, id: string) {
    const key = await this.prisma.apiKey.findUnique({ where: { id } });
    if (!key || key.userId !== userId || key.kind === GRANT_KEY_KIND) throw errors.notFound(`No API key '${id}'.`, 'key_not_found', 'id');
    if (key.revokedAt) return key;
    return this.prisma.apiKey.update({ where: { id }, data: { revokedAt: new Date() } });
  }

  async revokeKey(id: string): Promise<Key> {
    const key = await this.prisma.apiKey.findUnique({ where: { id } });
    if (!key) throw errors.notFound(`No API key '${id}'.`, 'key_not_found', 'id');
    if (key.revokedAt) return keyView(key);
    return keyView(await this.prisma.apiKey.update({ where: { id }, data: { revokedAt: new Date() } }));
  }
}

