// The OAuth 2.0 authorization server's state: apps, codes, grants and tokens (spec 2.1–2.5, 3.1).
// Every secret is stored as a SHA-256 hash and compared in constant time.
import { createHash, createHmac } from 'node:crypto';
import type { z } from 'zod';
import type { App } from '../../contract/oauth.ts';
import type { PrismaClient } from '../db/client.ts';
import { constantTimeEqualHex, displayPrefix, hashSecret, newId, randomToken } from '../auth/secrets.ts';
import { errors } from '../http/errors.ts';
import type { Clock } from '../runtime/clock.ts';
import { OAuthError } from './errors.ts';

export const SCOPES = ['identity', 'email', 'inference'] as const;
export type Scope = (typeof SCOPES)[number];
export const ACCESS_TOKEN_TTL_S = 3600;
export const CODE_TTL_MS = 120_000;
export const REFRESH_TOKEN_TTL_MS = 90 * 86_400_000;
const ACCESS_PREFIX = 'mgo_at_';
const REFRESH_PREFIX = 'mgo_rt_';

export const isAccessToken = (t: string) => t.startsWith(ACCESS_PREFIX);

/** A redirect URI apps may register: exact, no fragment, HTTPS or loopback HTTP. */
export function redirectUriProblem(uri: string): string | null {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return 'is not an absolute URL';
  }
  if (u.hash || uri.includes('#')) return 'must not contain a fragment';
  if (uri.includes('*')) return 'must not contain wildcards';
  if (u.protocol === 'https:') return null;
  if (u.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(u.hostname)) return null;
  return 'must use HTTPS (plain HTTP only for localhost or 127.0.0.1)';
}

function base62(bytes: Buffer, length: number): string {
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  let n = BigInt('0x' + bytes.toString('hex'));
  let out = '';
  while (out.length < length) {
    out += alphabet[Number(n % 62n)];
    n /= 62n;
  }
  return out;
}

export type AppView = z.infer<typeof App>;

type AppRow = { id: string; clientId: string; name: string; description: string; redirectUris: string[]; homepageUrl: string | null; logoUrl: string | null; secretHash: string | null; createdAt: Date };
const appView = (a: AppRow): AppView => ({
  id: a.id,
  client_id: a.clientId,
  name: a.name,
  description: a.description,
  redirect_uris: a.redirectUris,
  homepage_url: a.homepageUrl,
  logo_url: a.logoUrl,
  public_client: a.secretHash === null,
  created_at: a.createdAt.toISOString(),
});

export type TokenSet = { access_token: string; token_type: 'Bearer'; expires_in: number; refresh_token: string; scope: string };

export class OAuthService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly secret: string,
    private readonly clock: Clock,
    private readonly maxApps: number,
  ) {}

  private now() {
    return new Date(this.clock.now());
  }

  // ---- the user's stable API key ------------------------------------------------------------
  /** Derived from the gateway secret, so it can be shown again (userinfo) yet is stored hashed. */
  stableKey(userId: string): string {
    return 'mg-' + base62(createHmac('sha256', this.secret).update(`stable-key:${userId}`).digest(), 43);
  }

  /** Makes sure the user's stable key exists (and is not revoked); returns its id and plaintext. */
  async ensureStableKey(userId: string): Promise<{ id: string; key: string }> {
    const key = this.stableKey(userId);
    const hash = hashSecret(key);
    const existing = await this.prisma.apiKey.findUnique({ where: { hash } });
    if (existing) return { id: existing.id, key };
    const row = await this.prisma.apiKey.upsert({
      where: { hash },
      update: {},
      create: { id: newId('key'), userId, name: 'stable key', prefix: displayPrefix(key), hash, kind: 'stable' },
    });
    return { id: row.id, key };
  }

  // ---- apps ---------------------------------------------------------------------------------
  private checkApp(input: { name?: string; redirect_uris?: string[]; homepage_url?: string | null; logo_url?: string | null }) {
    input.redirect_uris?.forEach((uri, i) => {
      const problem = redirectUriProblem(uri);
      if (problem) throw errors.invalid(`Redirect URI '${uri}' ${problem}.`, `redirect_uris[${i}]`);
    });
    for (const f of ['homepage_url', 'logo_url'] as const) {
      const v = input[f];
      if (v && !/^https?:\/\//.test(v)) throw errors.invalid(`'${f}' must be an http(s) URL.`, f);
    }
  }

  async createApp(ownerId: string, input: { name: string; description?: string; redirect_uris: string[]; homepage_url?: string | null; logo_url?: string | null; public_client?: boolean }): Promise<AppView & { client_secret: string | null }> {
    this.checkApp(input);
    const count = await this.prisma.oAuthApp.count({ where: { ownerId } });
    if (count >= this.maxApps) throw errors.forbidden('too_many_apps', `A user may register at most ${this.maxApps} apps; delete one first.`);
    const secret = input.public_client ? null : `mgcs_${randomToken(43)}`;
    const app = await this.prisma.oAuthApp.create({
      data: {
        id: newId('app'),
        clientId: `mgc_${randomToken(24)}`,
        ownerId,
        name: input.name,
        description: input.description ?? '',
        redirectUris: input.redirect_uris,
        homepageUrl: input.homepage_url ?? null,
        logoUrl: input.logo_url ?? null,
        secretHash: secret ? hashSecret(secret) : null,
      },
    });
    return { ...appView(app), client_secret: secret };
  }

  async listApps(ownerId: string): Promise<AppView[]> {
    return (await this.prisma.oAuthApp.findMany({ where: { ownerId }, orderBy: { createdAt: 'asc' } })).map(appView);
  }

  private async ownApp(ownerId: string, appId: string) {
    const app = await this.prisma.oAuthApp.findFirst({ where: { id: appId, ownerId } });
    if (!app) throw errors.notFound(`No app '${appId}'.`, 'app_not_found', 'id');
    return app;
  }

  /** A new secret; the old one stops working at once. */
  async rotateSecret(ownerId: string, appId: string): Promise<AppView & { client_secret: string }> {
    await this.ownApp(ownerId, appId);
    const secret = `mgcs_${randomToken(43)}`;
    const app = await this.prisma.oAuthApp.update({ where: { id: appId }, data: { secretHash: hashSecret(secret), secretRotatedAt: this.now() } });
    return { ...appView(app), client_secret: secret };
  }

  async deleteApp(ownerId: string, appId: string): Promise<void> {
    await this.ownApp(ownerId, appId);
    await this.prisma.oAuthApp.delete({ where: { id: appId } });
  }

  async clientById(clientId: string) {
    return this.prisma.oAuthApp.findUnique({ where: { clientId } });
  }

  // ---- authorization codes -------------------------------------------------------------------
  async issueCode(input: { appId: string; userId: string; redirectUri: string; scopes: string[]; codeChallenge?: string; codeChallengeMethod?: string }): Promise<string> {
    const code = `mgo_code_${randomToken(43)}`;
    await this.prisma.oAuthCode.create({
      data: {
        id: newId('cod'),
        codeHash: hashSecret(code),
        appId: input.appId,
        userId: input.userId,
        redirectUri: input.redirectUri,
        scopes: input.scopes,
        codeChallenge: input.codeChallenge ?? null,
        codeChallengeMethod: input.codeChallenge ? (input.codeChallengeMethod ?? 'S256') : null,
        expiresAt: new Date(this.clock.now() + CODE_TTL_MS),
      },
    });
    return code;
  }

  // ---- client authentication -------------------------------------------------------------------
  async authenticateClient(clientId: string | undefined, clientSecret: string | undefined) {
    if (!clientId) throw new OAuthError('invalid_client', 'Client authentication failed: no client_id.');
    const app = await this.clientById(clientId);
    if (!app) throw new OAuthError('invalid_client', 'Client authentication failed: unknown client.');
    if (app.secretHash) {
      if (!clientSecret || !constantTimeEqualHex(hashSecret(clientSecret), app.secretHash)) {
        throw new OAuthError('invalid_client', 'Client authentication failed: wrong or missing client secret.');
      }
    } else if (clientSecret) {
      throw new OAuthError('invalid_client', 'This is a public client: it has no secret.');
    }
    return app;
  }

  // ---- tokens ----------------------------------------------------------------------------------
  private async issueTokens(grantId: string, scopes: string[]): Promise<TokenSet> {
    const access = ACCESS_PREFIX + randomToken(43);
    const refresh = REFRESH_PREFIX + randomToken(43);
    const now = this.clock.now();
    await this.prisma.oAuthToken.createMany({
      data: [
        { id: newId('tok'), grantId, kind: 'access', tokenHash: hashSecret(access), expiresAt: new Date(now + ACCESS_TOKEN_TTL_S * 1000), createdAt: new Date(now) },
        { id: newId('tok'), grantId, kind: 'refresh', tokenHash: hashSecret(refresh), expiresAt: new Date(now + REFRESH_TOKEN_TTL_MS), createdAt: new Date(now) },
      ],
    });
    return { access_token: access, token_type: 'Bearer', expires_in: ACCESS_TOKEN_TTL_S, refresh_token: refresh, scope: scopes.join(' ') };
  }

  /** Revokes a grant and every token issued under it. */
  async revokeGrant(grantId: string): Promise<void> {
    const now = this.now();
    await this.prisma.$transaction([
      this.prisma.oAuthGrant.updateMany({ where: { id: grantId, revokedAt: null }, data: { revokedAt: now } }),
      this.prisma.oAuthToken.updateMany({ where: { grantId, revokedAt: null }, data: { revokedAt: now } }),
    ]);
  }

  async exchangeCode(app: { id: string }, input: { code?: string; redirect_uri?: string; code_verifier?: string }): Promise<TokenSet> {
    if (!input.code) throw new OAuthError('invalid_request', 'code is required.');
    const row = await this.prisma.oAuthCode.findUnique({ where: { codeHash: hashSecret(input.code) } });
    if (!row || row.appId !== app.id) throw new OAuthError('invalid_grant', 'The authorization code is invalid.');
    if (row.usedAt) {
      // A replayed code: whoever holds it may have stolen it, so the tokens it produced die.
      if (row.grantId) await this.revokeGrant(row.grantId);
      throw new OAuthError('invalid_grant', 'The authorization code was already used; the tokens issued for it are revoked.');
    }
    if (row.expiresAt.getTime() <= this.clock.now()) throw new OAuthError('invalid_grant', 'The authorization code has expired.');
    if (input.redirect_uri !== row.redirectUri) throw new OAuthError('invalid_grant', 'redirect_uri does not match the authorization request.');
    if (row.codeChallenge) {
      if (!input.code_verifier) throw new OAuthError('invalid_grant', 'code_verifier is required (PKCE).');
      const computed = createHash('sha256').update(input.code_verifier).digest('base64url');
      if (!constantTimeEqualHex(Buffer.from(computed).toString('hex'), Buffer.from(row.codeChallenge).toString('hex'))) {
        throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge.');
      }
    }
    // Spend the code exactly once, even under concurrent exchanges.
    const spent = await this.prisma.oAuthCode.updateMany({ where: { id: row.id, usedAt: null }, data: { usedAt: this.now() } });
    if (spent.count !== 1) throw new OAuthError('invalid_grant', 'The authorization code was already used.');
    const existing = await this.prisma.oAuthGrant.findFirst({ where: { appId: app.id, userId: row.userId, revokedAt: null } });
    const grant = existing
      ? await this.prisma.oAuthGrant.update({ where: { id: existing.id }, data: { scopes: row.scopes, lastUsedAt: this.now() } })
      : await this.prisma.oAuthGrant.create({ data: { id: newId('grt'), appId: app.id, userId: row.userId, scopes: row.scopes, lastUsedAt: this.now() } });
    await this.prisma.oAuthCode.update({ where: { id: row.id }, data: { grantId: grant.id } });
    await this.ensureStableKey(row.userId);
    return this.issueTokens(grant.id, row.scopes);
  }

  async refresh(app: { id: string }, refreshToken: string | undefined): Promise<TokenSet> {
    if (!refreshToken) throw new OAuthError('invalid_request', 'refresh_token is required.');
    const row = await this.prisma.oAuthToken.findUnique({ where: { tokenHash: hashSecret(refreshToken) }, include: { grant: true } });
    if (!row || row.kind !== 'refresh' || row.grant.appId !== app.id) throw new OAuthError('invalid_grant', 'The refresh token is invalid.');
    if (row.revokedAt || row.grant.revokedAt) {
      // An old (rotated) refresh token came back: the grant is compromised.
      await this.revokeGrant(row.grantId);
      throw new OAuthError('invalid_grant', 'The refresh token was already used or revoked; the grant is revoked.');
    }
    if (row.expiresAt && row.expiresAt.getTime() <= this.clock.now()) throw new OAuthError('invalid_grant', 'The refresh token has expired.');
    const now = this.now();
    const rotated = await this.prisma.oAuthToken.updateMany({ where: { id: row.id, revokedAt: null }, data: { revokedAt: now } });
    if (rotated.count !== 1) {
      await this.revokeGrant(row.grantId);
      throw new OAuthError('invalid_grant', 'The refresh token was already used; the grant is revoked.');
    }
    // The access tokens issued before die with the old refresh token.
    await this.prisma.oAuthToken.updateMany({ where: { grantId: row.grantId, kind: 'access', revokedAt: null }, data: { revokedAt: now } });
    await this.prisma.oAuthGrant.update({ where: { id: row.grantId }, data: { lastUsedAt: now } });
    return this.issueTokens(row.grantId, row.grant.scopes);
  }

  /** RFC 7009: revokes the grant of an access or refresh token; unknown tokens are not an error. */
  async revokeToken(token: string): Promise<string | null> {
    const row = await this.prisma.oAuthToken.findUnique({ where: { tokenHash: hashSecret(token) } });
    if (!row) return null;
    await this.revokeGrant(row.grantId);
    return row.grantId;
  }

  /** A valid access token's grant, user and scopes, or null. */
  async accessToken(token: string) {
    const row = await this.prisma.oAuthToken.findUnique({
      where: { tokenHash: hashSecret(token) },
      include: { grant: { include: { user: true, app: true } } },
    });
    if (!row || row.kind !== 'access' || row.revokedAt || row.grant.revokedAt || row.grant.user.disabledAt) return null;
    if (row.expiresAt && row.expiresAt.getTime() <= this.clock.now()) return null;
    return { grant: row.grant, user: row.grant.user, app: row.grant.app, scopes: row.grant.scopes, expiresAt: row.expiresAt };
  }

  async connectedApps(userId: string) {
    const grants = await this.prisma.oAuthGrant.findMany({ where: { userId, revokedAt: null }, include: { app: true }, orderBy: { createdAt: 'asc' } });
    return grants.map((g) => ({
      id: g.id,
      app: { client_id: g.app.clientId, name: g.app.name, description: g.app.description, homepage_url: g.app.homepageUrl, logo_url: g.app.logoUrl },
      scopes: g.scopes,
      granted_at: g.createdAt.toISOString(),
      last_used_at: g.lastUsedAt?.toISOString() ?? null,
    }));
  }

  async revokeConnectedApp(userId: string, grantId: string): Promise<void> {
    const grant = await this.prisma.oAuthGrant.findFirst({ where: { id: grantId, userId } });
    if (!grant) throw errors.notFound(`No connected app '${grantId}'.`, 'grant_not_found', 'id');
    await this.revokeGrant(grant.id);
  }
}

