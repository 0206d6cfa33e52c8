import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { RouteMeta } from '../../contract/index.ts';
import type { Principal } from '../auth/principal.ts';
import { constantTimeEqual } from '../auth/secrets.ts';
import { isAccessToken } from '../oauth/service.ts';
import type { Services } from '../services.ts';
import { GatewayError, errors } from './errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
    /** Who called an admin route: `admin-token`, or the admin user of the session. */
    adminActor?: string;
  }
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function routeMeta(request: FastifyRequest): RouteMeta | undefined {
  const config = request.routeOptions.config as { tsRestRoute?: { metadata?: RouteMeta } };
  return config.tsRestRoute?.metadata;
}

function bearer(request: FastifyRequest): string | undefined {
  const h = request.headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : '';
}

const invalidKey = () => errors.unauthenticated('Invalid API key.');

const appCredentialRefused = () =>
  errors.forbidden(
    'app_credential_not_allowed',
    'This route manages your account: use your own API key. Credentials issued to an app (OAuth access tokens and the api_key of a grant) are for inference only.',
  );

// RFC 6750 §3.1: the challenge names the scope the token lacks.
const insufficientScope = () =>
  new GatewayError(403, 'permission_error', 'insufficient_scope', 'This access token was not granted the inference scope.', null, {
    'www-authenticate': 'Bearer error="insufficient_scope", scope="inference"',
  });

/** The credential a key-authenticated route was sent; throws 401 when there is none. */
function presentedKey(request: FastifyRequest, auth: 'bearer' | 'bearer-or-x-api-key'): string {
  const headerKey = auth === 'bearer-or-x-api-key' ? request.headers['x-api-key'] : undefined;
  const key = (typeof headerKey === 'string' && headerKey) || bearer(request);
  if (!key) {
    throw errors.unauthenticated(
      auth === 'bearer'
        ? 'Missing API key. Send it as `Authorization: Bearer <API_KEY>`.'
        : 'Missing API key. Send it as `x-api-key: <API_KEY>` or `Authorization: Bearer <API_KEY>`.',
    );
  }
  return key;
}

/**
 * Authenticates by the route's scheme before the body is read, so bad credentials cost nothing;
 * then refuses, still before the body, an upload to a capability not built yet. A callback hook:
 * an API key the cache knows (nearly every request) is answered without a promise or a tick.
 */
export function authHook(services: Services) {
  /** Lets `principal` act on the route: account routes are for the user's own keys, never an app's. */
  function admit(request: FastifyRequest, meta: RouteMeta, principal: Principal): void {
    if (meta.access === 'account' && principal.appId !== undefined) throw appCredentialRefused();
    request.principal = principal;
  }

  /**
   * The dashboard's session: the cookie's user, with the session's CSRF token on unsafe methods
   * (the cookie is SameSite=Lax, which alone does not stop a same-site page posting).
   */
  async function session(request: FastifyRequest, meta: RouteMeta): Promise<void> {
    const user = await services.sessions.user(request);
    if (!user) throw errors.unauthenticated('Not signed in, or the session has ended: sign in at /signin.', 'not_signed_in');
    if (UNSAFE.has(request.method) && !services.sessions.checkCsrf(request, request.headers['x-csrf-token'])) {
      throw errors.forbidden('csrf_token_invalid', 'Missing or wrong X-CSRF-Token header: send the csrf_token of GET /v1/session with requests made with the session cookie.');
    }
    if (meta.auth === 'admin') {
      if (user.role !== 'admin') throw errors.forbidden('admin_role_required', 'This needs the admin role (granted with the CLI: users set-role <user> admin).');
      request.adminActor = user.id;
    }
    request.principal = { kind: 'session', keyId: '', userId: user.id, planId: user.planId };
  }

  async function slow(request: FastifyRequest, meta: RouteMeta, key: string | null): Promise<void> {
    if (meta.auth === 'session') {
      await session(request, meta);
    } else if (meta.auth === 'admin') {
      const token = bearer(request);
      if (token === undefined && meta.session && services.sessions.has(request)) return session(request, meta);
      if (!token || !constantTimeEqual(token, services.adminToken)) {
        throw new GatewayError(401, 'authentication_error', 'invalid_admin_token', 'Missing or invalid admin token.');
      }
      request.adminActor = 'admin-token';
    } else if (key !== null && isAccessToken(key)) {
      const principal = await services.oauthAuth.authenticate(key);
      if (!principal) throw errors.unauthenticated('Invalid, expired or revoked access token.');
      if (principal === 'no_inference') throw insufficientScope();
      admit(request, meta, principal);
    } else if (key !== null) {
      const principal = await services.keys.authenticate(key);
      if (!principal) throw invalidKey();
      admit(request, meta, principal);
    }
  }

  return function authenticate(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
    let key: string | null = null;
    try {
      const meta = routeMeta(request);
      if (!meta) return done();
      if (meta.auth === 'bearer' || meta.auth === 'bearer-or-x-api-key') {
        // No credential but the dashboard's cookie, on a route that takes it: the session.
        if (meta.session && request.headers.authorization === undefined && services.sessions.has(request)) {
          session(request, meta).then(() => done(), done);
          return;
        }
        key = presentedKey(request, meta.auth);
        const known = isAccessToken(key) ? undefined : services.keys.cached(key);
        if (known === null) throw invalidKey();
        if (known) {
          admit(request, meta, known);
          return done();
        }
      } else if (meta.auth !== 'admin' && meta.auth !== 'session') {
        return done();
      }
      slow(request, meta, key).then(() => done(), done);
    } catch (err) {
      done(err as Error);
    }
  };
}
