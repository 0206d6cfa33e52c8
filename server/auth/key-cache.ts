import type { PrismaClient } from '../db/client.ts';
import { constantTimeEqualHex, hashSecret } from '../runtime/secrets.ts';
import { principalBudgets, type Principal } from './principal.ts';

type Entry = { principal: Principal | null; expiresAt: number };

/**
 * API key → principal, cached in memory so no request pays a database round trip. Entries live
 * `ttlMs`: a revoked key or a changed plan takes effect within that time on every instance.
 * Unknown keys are cached too (briefly), so a flood of bad keys does not reach the database.
 */
export class KeyAuthenticator {
  private readonly cache = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<Principal | null>>();
  private readonly touched = new Set<string>();
  private readonly flushTimer: NodeJS.Timeout;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly ttlMs: number,
    private readonly maxEntries = 100_000,
    private readonly now: () => number = Date.now,
  ) {
    this.flushTimer = setInterval(() => void this.flushLastUsed(), 30_000);
    this.flushTimer.unref();
  }

  /**
   * The cached answer for `key` without waiting: a principal, null for a key known to be invalid,
   * undefined when the cache does not know (then `authenticate`). Most requests end here.
   */
  cached(key: string): Principal | null | undefined {
    const hit = this.cache.get(hashSecret(key));
    if (!hit || hit.expiresAt <= this.now()) return undefined;
    if (hit.principal) this.touched.add(hit.principal.keyId);
    return hit.principal;
  }

  async authenticate(key: string): Promise<Principal | null> {
    const known = this.cached(key);
    if (known !== undefined) return known;
    const hash = hashSecret(key);
    let pending = this.inflight.get(hash);
    if (!pending) {
      pending = this.lookup(hash).finally(() => this.inflight.delete(hash));
      this.inflight.set(hash, pending);
    }
    const principal = await pending;
    if (principal) this.touched.add(principal.keyId);
    return principal;
  }

  private async lookup(hash: string): Promise<Principal | null> {
    const row = await this.prisma.apiKey.findUnique({
      where: { hash },
      select: {
        id: true,
        hash: true,
        revokedAt: true,
        dailyBudgetUsd: true,
        monthlyBudgetUsd: true,
        captureBodies: true,
        user: { select: { id: true, planId: true, disabledAt: true, dailyBudgetUsd: true, monthlyBudgetUsd: true } },
        grant: { select: { appId: true, revokedAt: true } },
      },
    });
    // A grant's key dies with its grant, even if a revocation raced the key's creation.
    const valid = row && !row.revokedAt && !row.grant?.revokedAt && !row.user.disabledAt && constantTimeEqualHex(row.hash, hash);
    const budgets = valid ? principalBudgets(row.user, row) : undefined;
    const principal: Principal | null = valid
      ? { kind: 'api_key', keyId: row.id, userId: row.user.id, planId: row.user.planId, ...(row.grant && { appId: row.grant.appId }), ...(budgets && { budgets }), ...(row.captureBodies && { captureBodies: true }) }
      : null;
    if (this.cache.size >= this.maxEntries) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(hash, { principal, expiresAt: this.now() + this.ttlMs });
    return principal;
  }

  /** Drops cached entries at once (this instance); other instances follow within the TTL. */
  invalidateAll(): void {
    this.cache.clear();
  }

  /** Writes last-used times in one statement per flush, off the request path. */
  async flushLastUsed(): Promise<void> {
    if (!this.touched.size) return;
    const ids = [...this.touched];
    this.touched.clear();
    await this.prisma.apiKey.updateMany({ where: { id: { in: ids } }, data: { lastUsedAt: new Date(this.now()) } }).catch(() => {
      for (const id of ids) this.touched.add(id);
    });
  }

  async close(): Promise<void> {
    clearInterval(this.flushTimer);
    await this.flushLastUsed();
  }
}
