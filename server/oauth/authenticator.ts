import { principalBudgets, type Principal } from '../auth/principal.ts';
import { hashSecret } from '../runtime/secrets.ts';
import type { OAuthService } from './service.ts';

/**
 * What an access token is on the API's bearer routes: a principal billed to its grant's key (the
 * key the app also receives as `api_key`, so both share one usage and quota), `no_inference` for
 * a valid token without the inference scope, null for none.
 */
export type AccessTokenAuth = Principal | 'no_inference' | null;

/**
 * OAuth access token → principal, cached like API keys. Revocations on this instance clear the
 * cache at once; other instances follow within the TTL.
 */
export class OAuthAuthenticator {
  private readonly cache = new Map<string, { auth: AccessTokenAuth; expiresAt: number }>();

  constructor(
    private readonly oauth: OAuthService,
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  async authenticate(token: string): Promise<AccessTokenAuth> {
    const hash = hashSecret(token);
    const hit = this.cache.get(hash);
    if (hit && hit.expiresAt > this.now()) return hit.auth;
    const found = await this.oauth.accessToken(token);
    let auth: AccessTokenAuth = null;
    if (found && !found.scopes.includes('inference')) auth = 'no_inference';
    else if (found) {
      const key = await this.oauth.grantKey(found.grant);
      const budgets = principalBudgets(found.user);
      if (!key.revoked) auth = { kind: 'oauth', keyId: key.id, userId: found.user.id, planId: found.user.planId, appId: found.app.id, ...(budgets && { budgets }) };
    }
    // Never cache a token past its own expiry.
    const until = Math.min(this.now() + this.ttlMs, found?.expiresAt?.getTime() ?? Infinity);
    if (this.cache.size > 100_000) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(hash, { auth, expiresAt: until });
    return auth;
  }

  invalidateAll(): void {
    this.cache.clear();
  }
}
