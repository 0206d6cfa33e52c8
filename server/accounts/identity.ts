// External identity providers for signing in to the gateway's pages: a Discord preset and any
// OpenID Connect issuer (discovered) or plain OAuth 2.0 provider, through openid-client.
import * as oidc from 'openid-client';
import type { IdentityProviderConfig } from '../config/schema.ts';
import { storable, storableOrNull } from '../runtime/stored-text.ts';

export type ExternalProfile = { subject: string; email: string | null; emailVerified: boolean; username: string | null; name: string | null; avatarUrl: string | null };

/** The userinfo fields read: OpenID Connect's standard claims, Discord's user object (plain OAuth 2.0 providers answer either). */
type UserInfo = {
  sub?: unknown;
  id?: unknown;
  email?: string | null;
  email_verified?: unknown;
  preferred_username?: string;
  nickname?: string;
  name?: string;
  picture?: string;
  verified?: unknown;
  username?: string | null;
  global_name?: string | null;
  avatar?: string | null;
};

type Provider = { id: string; name: string; scopes: string[]; config: Promise<oidc.Configuration>; profile(info: UserInfo): ExternalProfile };

const insecure = (url: string) => (url.startsWith('http://') ? { execute: [oidc.allowInsecureRequests] } : undefined);

/**
 * A profile as the accounts store it: what an identity provider sends is its own text (a name of
 * any length, with any character), made storable (runtime/stored-text.ts) and bounded like the
 * gateway's own forms' fields.
 */
function storedProfile(p: ExternalProfile): ExternalProfile {
  return {
    ...p,
    subject: storable(p.subject, 256),
    email: storableOrNull(p.email, 254),
    username: storableOrNull(p.username, 200),
    name: storableOrNull(p.name, 200),
    avatarUrl: storableOrNull(p.avatarUrl, 2048),
  };
}

function standardProfile(info: UserInfo): ExternalProfile {
  return {
    subject: String(info.sub),
    email: info.email ?? null,
    emailVerified: info.email_verified === true,
    username: info.preferred_username ?? info.nickname ?? null,
    name: info.name ?? null,
    avatarUrl: info.picture ?? null,
  };
}

function build(p: IdentityProviderConfig): Provider {
  if (p.type === 'discord') {
    const server: oidc.ServerMetadata = {
      issuer: 'https://discord.com',
      authorization_endpoint: 'https://discord.com/oauth2/authorize',
      token_endpoint: 'https://discord.com/api/oauth2/token',
      userinfo_endpoint: 'https://discord.com/api/users/@me',
    };
    return {
      id: p.id,
      name: p.name,
      scopes: ['identify', 'email'],
      config: Promise.resolve(new oidc.Configuration(server, p.client_id, p.client_secret)),
      profile: (u) => ({
        subject: String(u.id),
        email: u.email ?? null,
        emailVerified: u.verified === true,
        username: u.username ?? null,
        name: u.global_name ?? u.username ?? null,
        avatarUrl: u.avatar ? `https://cdn.discordapp.com/avatars/${u.id}/${u.avatar}.png` : null,
      }),
    };
  }
  if (p.type === 'oidc') {
    const config = oidc.discovery(new URL(p.issuer), p.client_id, p.client_secret, undefined, insecure(p.issuer));
    config.catch(() => {}); // reported when someone signs in with it
    return { id: p.id, name: p.name ?? p.id, scopes: p.scopes, config, profile: standardProfile };
  }
  const server: oidc.ServerMetadata = { issuer: new URL(p.authorization_endpoint).origin, authorization_endpoint: p.authorization_endpoint, token_endpoint: p.token_endpoint, userinfo_endpoint: p.userinfo_endpoint };
  const config = new oidc.Configuration(server, p.client_id, p.client_secret);
  if (p.authorization_endpoint.startsWith('http://')) oidc.allowInsecureRequests(config);
  return {
    id: p.id,
    name: p.name ?? p.id,
    scopes: p.scopes,
    config: Promise.resolve(config),
    profile: (u) => ({ ...standardProfile({ sub: u.sub ?? u.id, ...u }) }),
  };
}

export class IdentityProviders {
  private readonly providers: Map<string, Provider>;
  constructor(configs: IdentityProviderConfig[]) {
    this.providers = new Map(configs.map((c) => [c.id, build(c)]));
  }

  list(): { id: string; name: string }[] {
    return [...this.providers.values()].map((p) => ({ id: p.id, name: p.name }));
  }

  /** The URL to send the browser to, plus the state to keep until the callback. */
  async start(id: string, redirectUri: string): Promise<{ url: string; state: string; verifier: string; nonce: string }> {
    const p = this.providers.get(id);
    if (!p) throw new Error(`unknown identity provider ${id}`);
    const config = await p.config;
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const params: Record<string, string> = {
      redirect_uri: redirectUri,
      scope: p.scopes.join(' '),
      response_type: 'code',
      state,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    };
    if (p.scopes.includes('openid')) params.nonce = nonce;
    return { url: oidc.buildAuthorizationUrl(config, params).href, state, verifier, nonce };
  }

  /** Completes the code flow at the callback and reads the user's profile. */
  async finish(id: string, currentUrl: URL, checks: { state: string; verifier: string; nonce: string }): Promise<ExternalProfile> {
    const p = this.providers.get(id)!;
    const config = await p.config;
    const openid = p.scopes.includes('openid');
    const tokens = await oidc.authorizationCodeGrant(config, currentUrl, {
      pkceCodeVerifier: checks.verifier,
      expectedState: checks.state,
      ...(openid ? { expectedNonce: checks.nonce, idTokenExpected: true } : {}),
    });
    const sub = openid ? tokens.claims()?.sub : undefined;
    const info = await oidc.fetchUserInfo(config, tokens.access_token, sub ?? oidc.skipSubjectCheck);
    return storedProfile(p.profile(info));
  }
}
