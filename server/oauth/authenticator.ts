import type { Principal } from '../auth/principal.ts';
import { hashSecret } from '../auth/secrets.ts';
import type { OAuthService } from './service.ts';

/**
 * OAuth access token → principal billed to the user's own stable key, cached like API keys.
 * Revocations on this instance clear the cache at once; other instances follow within the TTL.
 */
export class OAuthAuthenticator {
  private readonly cache = new Map<string, { principal: Principal | null; expiresAt: number }>();

  constructor(
    private readonly oauth: OAuthService,
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  async authenticate(token: string): Promise<Principal | null> {
    const hash = hashSecret(token);
    const hit = this.cache.get(hash);
    if (hit && hit.expiresAt > this.now()) return hit.principal;
    const found = await this.oauth.accessToken(token);
    let principal: Principal | null = null;
    if (found) {
      const stable = await this.oauth.ensureStableKey(found.user.id);
      principal = { kind: 'oauth', keyId: stable.id, userId: found.user.id, planId: found.user.planId, appId: found.app.id, scopes: found.scopes };
    }
    // Never cache a token past its own expiry.
    const until = Math.min(this.now() + this.ttlMs, found?.expiresAt?.getTime() ?? Infinity);
    if (this.cache.size > 100_000) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(hash, { principal, expiresAt: until });
    return principal;
  }

  invalidateAll(): void {
    this.cache.clear();
  }
}
