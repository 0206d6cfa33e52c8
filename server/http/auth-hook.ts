import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { RouteMeta } from '../../contract/index.ts';
import type { Principal } from '../auth/principal.ts';
import { isAccessToken } from '../oauth/service.ts';
import type { Services } from './services.ts';
import { GatewayError, errors } from '../runtime/errors.ts';
import { routeOptionsOf } from './route-options.ts';
import { formatOfScheme } from '../client-formats/index.ts';
import type { ClientFormatSpec } from '../client-formats/spec.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
    /** Who called an admin route: `admin-token`, or the admin user of the session. */
    adminActor?: string;
  }
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function routeMeta(request: FastifyRequest): RouteMeta | undefined {
  const config = routeOptionsOf(request).config as { tsRestRoute?: { metadata?: RouteMeta } };
  return config.tsRestRoute?.metadata;
}

function bearer(request: FastifyRequest): string | undefined {
  const h = request.headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : '';
}

/**
 * What is wrong with an Authorization header that is not `Bearer <credential>`, in words that say
 * how to write it. The value is never echoed: it may be the credential itself.
 */
function malformedAuthorization(h: string, credential: string): string {
  const words = h.trim().split(/\s+/);
  const example = `\`Authorization: Bearer <${credential}>\``;
  if (/^bearer$/i.test(words[0]!)) {
    return words.length === 1
      ? `The Authorization header has nothing after "Bearer": send ${example}.`
      : `The Authorization header has more than one word after "Bearer": send ${example}, the ${credential} without spaces.`;
  }
  if (words.length === 1) return `The Authorization header has no "Bearer " before the ${credential}: send ${example}.`;
  return `The Authorization header must use the Bearer scheme: send ${example}.`;
}

const invalidKey = () => errors.unauthenticated('Invalid API key.');

// Inference is for API keys and OAuth access tokens (docs/api.md, "Base URL and authentication"): the dashboard's sign-in cookie
// alone would bill nobody's key and share one set of counters among every signed-in user.
const sessionNotAccepted = () =>
  errors.unauthenticated(
    "This endpoint takes an API key or an OAuth access token, not the dashboard's sign-in session: create a key on the dashboard's Keys page (/keys) and send it as `Authorization: Bearer <API_KEY>`.",
    'api_key_required',
  );

// Key management is the signed-in person's (and the operator's): a key that could make keys would
// outlive its own revocation through them.
const sessionRequired = () =>
  errors.forbidden(
    'session_required',
    "Creating and revoking API keys needs the dashboard's signed-in session (the Keys page, /keys) or the operator (the admin API, or `model-gateway keys create|revoke`); an API key or access token cannot manage keys.",
  );

/** A credential in a header: an Authorization header of any kind, or x-api-key. */
const carriesCredential = (request: FastifyRequest) => request.headers.authorization !== undefined || request.headers['x-api-key'] !== undefined;

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

/** Where a client format's clients put their key besides `Authorization: Bearer` (client-formats/). */
const formatKey = (request: FastifyRequest, format: ClientFormatSpec | undefined) => format?.credential?.read(request.headers, request.query);

/**
 * The credential a key-authenticated route was sent: in its client format's own place (`format`,
 * the format whose scheme the route names), else `Authorization: Bearer`; throws 401 when there is none.
 */
function presentedKey(request: FastifyRequest, format: ClientFormatSpec | undefined): string {
  const key = formatKey(request, format) || bearer(request);
  // An Authorization header is there but not as `Bearer <key>`: say how to write it.
  if (key === '') throw errors.unauthenticated(malformedAuthorization(request.headers.authorization!, 'API_KEY'));
  if (!key) throw errors.unauthenticated(format?.credential?.missing ?? 'Missing API key. Send it as `Authorization: Bearer <API_KEY>`.');
  return key;
}

/**
 * Authenticates by the route's scheme before the body is read, so bad credentials cost nothing. A
 * callback hook: an API key the cache knows (nearly every request) is answered without a promise
 * or a tick.
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
    request.principal = { kind: 'session', keyId: '', userId: user.id, planId: user.planId, ...(user.budgets && { budgets: user.budgets }) };
  }

  async function slow(request: FastifyRequest, meta: RouteMeta, key: string | null): Promise<void> {
    if (meta.auth === 'session') {
      // Making or revoking keys with a key: say why not (reading the session without one is 401 below).
      if (UNSAFE.has(request.method) && carriesCredential(request) && !services.sessions.has(request)) throw sessionRequired();
      await session(request, meta);
    } else if (meta.auth === 'admin') {
      const token = bearer(request);
      if (token === undefined && meta.session && services.sessions.has(request)) return session(request, meta);
      if (!token || !services.adminTokens.accepts(token)) {
        // Operators read this in the CLI and in scripts: it says where the token is.
        const where = "the gateway's admin token is in its DATA_DIR/admin-token (with PostgreSQL, that of the instance that created it), or is its GATEWAY_ADMIN_TOKEN when it was started with one";
        const message =
          token === ''
            ? `${malformedAuthorization(request.headers.authorization!, 'admin token').slice(0, -1)}; ${where}.`
            : token === undefined
              ? `Missing admin token: send \`Authorization: Bearer <admin token>\`; ${where}.`
              : `Invalid admin token: ${where}.`;
        throw new GatewayError(401, 'authentication_error', 'invalid_admin_token', message);
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
      const format = formatOfScheme(meta.auth);
      if (meta.auth === 'bearer' || format) {
        // No credential but the dashboard's cookie, on a route that takes it: the session.
        if (request.headers.authorization === undefined && services.sessions.has(request)) {
          if (meta.session) {
            session(request, meta).then(() => done(), done);
            return;
          }
          if (request.headers['x-api-key'] === undefined && !formatKey(request, format)) throw sessionNotAccepted();
        }
        key = presentedKey(request, format);
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
