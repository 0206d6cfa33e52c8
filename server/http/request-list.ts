// GET /v1/requests and GET /admin/v1/requests: whose records a credential reads, and the signed
// links to captured bodies (served by GET /v1/files/:token like any hosted copy).
import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { AdminRequestListQuery, RequestListQuery } from '../../contract/requests.ts';
import { isSession, type Principal } from '../auth/principal.ts';
import { listRequests, type BodyLinks, type RequestScope } from '../requests/query.ts';
import { errors } from '../runtime/errors.ts';
import { linkOrigin } from './link-origin.ts';
import type { Services } from './services.ts';

/** Links to bodies live a quarter of an hour: long enough to read them, short for a link that leaks. */
const BODY_LINK_MS = 15 * 60_000;

function bodyLinks(services: Services, request: FastifyRequest): BodyLinks {
  const origin = linkOrigin(services, request);
  const expires = services.clock.now() + BODY_LINK_MS;
  return (prefix) => ({
    request_url: `${origin}/v1/files/${services.urls.sign(`${prefix}request`, expires)}`,
    response_url: `${origin}/v1/files/${services.urls.sign(`${prefix}response`, expires)}`,
    expires_at: new Date(expires).toISOString(),
  });
}

/**
 * A key reads its own requests (naming another key is 404, as for /v1/usage); an app's token its
 * app's requests for its user; the dashboard session every key of its user, or one of them.
 */
export async function ownRequests(services: Services, request: FastifyRequest, principal: Principal, query: z.infer<typeof RequestListQuery>) {
  const scope: RequestScope = { userId: principal.userId };
  if (isSession(principal)) {
    if (query.key !== undefined) {
      const own = await services.db.prisma.apiKey.findFirst({ where: { id: query.key, userId: principal.userId }, select: { id: true } });
      if (!own) throw errors.notFound(`No API key '${query.key}'.`, 'key_not_found', 'key');
    }
  } else if (principal.keyId) {
    if (query.key !== undefined && query.key !== principal.keyId) throw errors.notFound(`No API key '${query.key}'.`, 'key_not_found', 'key');
    scope.keyId = principal.keyId;
  } else if (principal.appId) {
    scope.appId = principal.appId;
  }
  return listRequests(services.db.sql, scope, query, bodyLinks(services, request));
}

export async function adminRequests(services: Services, request: FastifyRequest, query: z.infer<typeof AdminRequestListQuery>) {
  const scope: RequestScope = {};
  if (query.user !== undefined) {
    const user = await services.db.prisma.user.findFirst({ where: { OR: [{ id: query.user }, { email: query.user.toLowerCase() }] }, select: { id: true } });
    if (!user) throw errors.notFound(`No user '${query.user}'.`, 'user_not_found', 'user');
    scope.userId = user.id;
  }
  return listRequests(services.db.sql, scope, query, bodyLinks(services, request));
}
