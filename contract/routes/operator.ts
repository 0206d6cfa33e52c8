// The operator endpoints: liveness, readiness and Prometheus metrics.
import { z } from 'zod';
import { c, meta } from './meta.ts';

const Health = z.object({ status: z.enum(['ok', 'unavailable']), checks: z.record(z.string(), z.string()).optional() });
export const operatorRoutes = c.router({
  healthz: {
    method: 'GET',
    path: '/healthz',
    responses: { 200: Health },
    summary: 'Liveness: the process is up',
    ...meta({ auth: 'none', tag: 'Operations' }),
  },
  readyz: {
    method: 'GET',
    path: '/readyz',
    responses: { 200: Health, 503: Health },
    summary: 'Readiness: the database and the counter store answer',
    ...meta({ auth: 'none', tag: 'Operations' }),
  },
  metrics: {
    method: 'GET',
    path: '/metrics',
    responses: { 200: c.otherResponse({ contentType: 'text/plain', body: z.string() }) },
    summary: 'Prometheus metrics',
    ...meta({ auth: 'none', tag: 'Operations', raw: { 200: { 'text/plain; version=0.0.4': 'Prometheus text format' } } }),
  },
});
