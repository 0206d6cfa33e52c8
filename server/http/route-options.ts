// Fastify's `request.routeOptions` builds a new object of a dozen fields at every read; the hooks
// every request runs (its record, its credential, its metrics) read it once, here.
import type { FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** `routeOptions` as first read (http/route-options.ts). */
    routeMemo?: FastifyRequest['routeOptions'];
  }
}

export const routeOptionsOf = (request: FastifyRequest): FastifyRequest['routeOptions'] => (request.routeMemo ??= request.routeOptions);
