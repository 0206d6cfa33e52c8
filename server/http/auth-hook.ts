import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RouteMeta } from '../../contract/index.ts';
import type { Principal } from '../auth/principal.ts';
import { constantTimeEqual } from '../auth/secrets.ts';
import { isAccessToken } from '../oauth/service.ts';
import type { Services } from '../services.ts';
import { GatewayError, errors } from './errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}

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

/** Authenticates by the route's scheme before the body is read, so bad credentials cost nothing. */
export function authHook(services: Services) {
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const meta = routeMeta(request);
    if (!meta) return;
    switch (meta.auth) {
      case 'bearer':
      case 'bearer-or-x-api-key': {
        const headerKey = meta.auth === 'bearer-or-x-api-key' ? request.headers['x-api-key'] : undefined;
        const key = (typeof headerKey === 'string' && headerKey) || bearer(request);
        if (!key) {
          throw errors.unauthenticated(
            meta.auth === 'bearer'
              ? 'Missing API key. Send it as `Authorization: Bearer <API_KEY>`.'
              : 'Missing API key. Send it as `x-api-key: <API_KEY>` or `Authorization: Bearer <API_KEY>`.',
          );
        }
        if (isAccessToken(key)) {
          const principal = await services.oauthAuth.authenticate(key);
          if (!principal) throw errors.unauthenticated('Invalid, expired or revoked access token.');
          if (!principal.scopes?.includes('inference')) {
            throw errors.forbidden('insufficient_scope', 'This access token was not granted the inference scope.');
          }
          request.principal = principal;
          return;
        }
        const principal = await services.keys.authenticate(key);
        if (!principal) throw errors.unauthenticated('Invalid API key.');
        request.principal = principal;
        return;
      }
      case 'admin': {
        const token = bearer(request);
        if (!token || !constantTimeEqual(token, services.adminToken)) {
          throw new GatewayError(401, 'authentication_error', 'invalid_admin_token', 'Missing or invalid admin token.');
        }
        return;
      }
      default:
        return;
    }
  };
}
