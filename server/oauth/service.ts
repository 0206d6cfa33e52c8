// The OAuth 2.0 authorization server's state: apps, codes, grants and tokens (docs/api.md, "OAuth apps"; RFC 6749, RFC 7636).
// Every secret is stored as a SHA-256 hash and compared in constant time.
import { createHash, createHmac } from 'node:crypto';
import type { z } from 'zod';
import { OAuthScope, type App } from '../../contract/oauth.ts';
import type { PrismaClient } from '../db/client.ts';
import type { Prisma } from '../db/generated/client.ts';
import { API_KEY_PREFIX, constantTimeEqualHex, displayPrefix, hashSecret, newId, randomToken } from '../runtime/secrets.ts';
import { errors } from '../runtime/errors.ts';
import type { Clock } from '../runtime/clock.ts';
import { OAuthError } from './errors.ts';

/** The scopes an app may ask for: the contract's list. */
export const SCOPES = OAuthScope.options;
export const ACCESS_TOKEN_TTL_S = 3600;
export const CODE_TTL_MS = 120_000;
export const REFRESH_TOKEN_TTL_MS = 90 * 86_400_000;
const ACCESS_PREFIX = 'mgo_at_';
const REFRESH_PREFIX = 'mgo_rt_';

/** The kind of API key an app receives with the inference scope: one per user+app grant. */
export const GRANT_KEY_KIND = 'oauth_grant';

export const isAccessToken = (t: string) => t.startsWith(ACCESS_PREFIX);
const union = (a: string[], b: string[]) => [...new Set([...a, ...b])];

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

export type TokenSet = { access_token: string; token_type: 'Bearer'; expires_in: typeof ACCESS_TOKEN_TTL_S; refresh_token: string; scope: string };

export class OAuthService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly secret: string,
    private readonly clock: Clock,
    private readonly maxApps: number,
    /**
     * Called after credentials died, so cached authentications are dropped at once: `grants` when
     * grants (and their api_keys) died, `access_tokens` when only access tokens did (a refresh).
     */
    private readonly onRevoke: (what: 'grants' | 'access_tokens') => void = () => {},
  ) {}

  private now() {
    return new Date(this.clock.now());
  }

  // ---- the grant's API key ----------------------------------------------------------------------
  /**
   * The `api_key` of a grant, created on first use: derived from the gateway secret and the grant,
   * so userinfo can show it again although only its hash is stored. It lives as long as the grant.
   */
  async grantKey(grant: { id: string; userId: string; app: { name: string } }): Promise<{ id: string; key: string; revoked: boolean }> {
    const key = API_KEY_PREFIX + base62(createHmac('sha256', this.secret).update(`grant-key:${grant.id}`).digest(), 43);
    const hash = hashSecret(key);
    let row = await this.prisma.apiKey.findUnique({ where: { hash } });
    if (!row) {
      // Two first uses may race: the second insert is skipped, and both read the one row.
      await this.prisma.apiKey.createMany({
        data: [{ id: newId('key'), userId: grant.userId, grantId: grant.id, name: `OAuth: ${grant.app.name}`, prefix: displayPrefix(key), hash, kind: GRANT_KEY_KIND }],
        skipDuplicates: true,
      });
      row = await this.prisma.apiKey.findUniqueOrThrow({ where: { hash } });
    }
    return { id: row.id, key, revoked: row.revokedAt !== null };
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

  /** Deletes the app; its grants, tokens and grant keys go with it. */
  async deleteApp(ownerId: string, appId: string): Promise<void> {
    await this.ownApp(ownerId, appId);
    await this.prisma.oAuthApp.delete({ where: { id: appId } });
    this.onRevoke('grants');
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
  private async issueTokens(db: Prisma.TransactionClient, grantId: string, scopes: string[]): Promise<TokenSet> {
    const access = ACCESS_PREFIX + randomToken(43);
    const refresh = REFRESH_PREFIX + randomToken(43);
    const now = this.clock.now();
    await db.oAuthToken.createMany({
      data: [
        { id: newId('tok'), grantId, kind: 'access', tokenHash: hashSecret(access), scopes, expiresAt: new Date(now + ACCESS_TOKEN_TTL_S * 1000), createdAt: new Date(now) },
        { id: newId('tok'), grantId, kind: 'refresh', tokenHash: hashSecret(refresh), scopes, expiresAt: new Date(now + REFRESH_TOKEN_TTL_MS), createdAt: new Date(now) },
      ],
    });
    return { access_token: access, token_type: 'Bearer', expires_in: ACCESS_TOKEN_TTL_S, refresh_token: refresh, scope: scopes.join(' ') };
  }

  /** Revokes a grant: its tokens, its api_key, and the codes the user approved for the app that were not exchanged yet. */
  async revokeGrant(grantId: string): Promise<void> {
    const grant = await this.prisma.oAuthGrant.findUnique({ where: { id: grantId } });
    if (!grant) return;
    const now = this.now();
    // Codes first, then the grant: the order an exchange locks them in, so the two never deadlock.
    // A grant revoked before keeps codes approved since: they belong to a new authorization.
    await this.prisma.$transaction([
      ...(grant.revokedAt ? [] : [this.prisma.oAuthCode.updateMany({ where: { appId: grant.appId, userId: grant.userId, usedAt: null }, data: { usedAt: now } })]),
      this.prisma.oAuthGrant.updateMany({ where: { id: grantId, revokedAt: null }, data: { revokedAt: now } }),
      this.prisma.oAuthToken.updateMany({ where: { grantId, revokedAt: null }, data: { revokedAt: now } }),
      this.prisma.apiKey.updateMany({ where: { grantId, revokedAt: null }, data: { revokedAt: now } }),
    ]);
    this.onRevoke('grants');
  }

  /**
   * A code presented after it was spent — replayed, or the loser of a race with its first
   * exchange: whoever holds it may have stolen it, so the grant it produced dies.
   */
  private async codeReplayed(codeId: string): Promise<never> {
    const { grantId } = await this.prisma.oAuthCode.findUniqueOrThrow({ where: { id: codeId } });
    if (grantId) await this.revokeGrant(grantId);
    throw new OAuthError('invalid_grant', 'The authorization code was already used or revoked; the tokens issued for it are revoked.');
  }

  async exchangeCode(app: { id: string }, input: { code?: string; redirect_uri?: string; code_verifier?: string }): Promise<TokenSet> {
    if (!input.code) throw new OAuthError('invalid_request', 'code is required.');
    const row = await this.prisma.oAuthCode.findUnique({ where: { codeHash: hashSecret(input.code) } });
    if (!row || row.appId !== app.id) throw new OAuthError('invalid_grant', 'The authorization code is invalid.');
    if (row.usedAt) return this.codeReplayed(row.id);
    if (row.expiresAt.getTime() <= this.clock.now()) throw new OAuthError('invalid_grant', 'The authorization code has expired.');
    if (input.redirect_uri !== row.redirectUri) throw new OAuthError('invalid_grant', 'redirect_uri does not match the authorization request.');
    if (row.codeChallenge) {
      if (!input.code_verifier) throw new OAuthError('invalid_grant', 'code_verifier is required (PKCE).');
      const computed = createHash('sha256').update(input.code_verifier).digest('base64url');
      if (!constantTimeEqualHex(Buffer.from(computed).toString('hex'), Buffer.from(row.codeChallenge).toString('hex'))) {
        throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge.');
      }
    } else if (input.code_verifier !== undefined) {
      // RFC 9700 §2.1.1: a verifier for a code issued without a challenge is a PKCE downgrade.
      throw new OAuthError('invalid_grant', 'code_verifier was sent, but the authorization request had no code_challenge.');
    }
    const now = this.now();
    // One transaction: a concurrent exchange of the same code waits at the spend below until this
    // one has committed, and then finds the grant to revoke.
    const tokens = await this.prisma.$transaction(async (tx) => {
      const spent = await tx.oAuthCode.updateMany({ where: { id: row.id, usedAt: null }, data: { usedAt: now } });
      if (spent.count !== 1) return null;
      const existing = await tx.oAuthGrant.findFirst({ where: { appId: app.id, userId: row.userId, revokedAt: null } });
      const grant = existing
        ? await tx.oAuthGrant.update({ where: { id: existing.id }, data: { scopes: union(existing.scopes, row.scopes), lastUsedAt: now } })
        : await tx.oAuthGrant.create({ data: { id: newId('grt'), appId: app.id, userId: row.userId, scopes: row.scopes, lastUsedAt: now } });
      await tx.oAuthCode.update({ where: { id: row.id }, data: { grantId: grant.id } });
      return this.issueTokens(tx, grant.id, row.scopes);
    });
    return tokens ?? this.codeReplayed(row.id);
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
    this.onRevoke('access_tokens');
    await this.prisma.oAuthGrant.update({ where: { id: row.grantId }, data: { lastUsedAt: now } });
    return this.issueTokens(this.prisma, row.grantId, row.scopes);
  }

  /**
   * RFC 7009: revokes the grant of an access or refresh token; unknown tokens are not an error.
   * A client that authenticated (`clientAppId`) may revoke only tokens issued to it (§2.1).
   */
  async revokeToken(token: string, clientAppId?: string): Promise<void> {
    const row = await this.prisma.oAuthToken.findUnique({ where: { tokenHash: hashSecret(token) }, include: { grant: true } });
    if (!row) return;
    if (clientAppId !== undefined && row.grant.appId !== clientAppId) throw new OAuthError('unauthorized_client', 'The token was issued to another client; it is not revoked.');
    await this.revokeGrant(row.grantId);
  }

  /** A valid access token's grant, user and scopes (those it was issued with), or null. */
  async accessToken(token: string) {
    const row = await this.prisma.oAuthToken.findUnique({
      where: { tokenHash: hashSecret(token) },
      include: { grant: { include: { user: true, app: true } } },
    });
    if (!row || row.kind !== 'access' || row.revokedAt || row.grant.revokedAt || row.grant.user.disabledAt) return null;
    if (row.expiresAt && row.expiresAt.getTime() <= this.clock.now()) return null;
    return { grant: row.grant, user: row.grant.user, app: row.grant.app, scopes: row.scopes, expiresAt: row.expiresAt };
  }

  async connectedApps(userId: string) {
    const grants = await this.prisma.oAuthGrant.findMany({ where: { userId, revokedAt: null }, include: { app: true, apiKey: true }, orderBy: { createdAt: 'asc' } });
    return grants.map(({ app, apiKey: key, ...g }) => ({
      id: g.id,
      app: { client_id: app.clientId, name: app.name, description: app.description, homepage_url: app.homepageUrl, logo_url: app.logoUrl },
      scopes: g.scopes,
      granted_at: g.createdAt.toISOString(),
      last_used_at: g.lastUsedAt?.toISOString() ?? null,
      api_key: key && !key.revokedAt ? { prefix: key.prefix, created_at: key.createdAt.toISOString(), last_used_at: key.lastUsedAt?.toISOString() ?? null } : null,
    }));
  }

  async revokeConnectedApp(userId: string, grantId: string): Promise<void> {
    const grant = await this.prisma.oAuthGrant.findFirst({ where: { id: grantId, userId } });
    if (!grant) throw errors.notFound(`No connected app '${grantId}'.`, 'grant_not_found', 'id');
    await this.revokeGrant(grant.id);
  }
}

