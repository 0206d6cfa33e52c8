// The dashboard's account routes: its session, the user's API keys and jobs.
import { z } from 'zod';
import * as dashboard from '../dashboard.ts';
import { errorResponses } from '../errors.ts';
import { c, meta } from './meta.ts';

export const dashboardRoutes = c.router({
  session: {
    method: 'GET',
    path: '/v1/session',
    responses: { 200: dashboard.DashboardSession, ...errorResponses(401, 500) },
    summary: 'The signed-in user of the dashboard session, and its CSRF token',
    description: 'Authenticated by the session cookie `mg_session` (set by signing in at /signin). 401 `not_signed_in` without a valid session.',
    ...meta({ auth: 'session', tag: 'Dashboard', noStore: true }),
  },
  listApiKeys: {
    method: 'GET',
    path: '/v1/keys',
    responses: { 200: z.object({ object: z.literal('list'), data: z.array(dashboard.ApiKey) }), ...errorResponses(401, 403, 500) },
    summary: 'Your API keys, newest first, with their live counters',
    ...meta({ session: true, auth: 'bearer', tag: 'Dashboard', access: 'account' }),
  },
  createApiKey: {
    method: 'POST',
    path: '/v1/keys',
    body: dashboard.CreateApiKeyBody,
    responses: { 201: dashboard.CreatedApiKey, ...errorResponses(400, 401, 403, 500) },
    summary: 'Create an API key (the key is in this response only)',
    description:
      'With the dashboard session only (and its `X-CSRF-Token`): an API key cannot make keys (403 session_required), so a leaked key cannot outlive its revocation through keys it made. ' +
      'At most the plan’s `max_keys` active keys per user (403 too_many_keys); operators make keys with the admin API or `model-gateway keys create`.',
    ...meta({ auth: 'session', tag: 'Dashboard', noStore: true }),
  },
  revokeApiKey: {
    method: 'POST',
    path: '/v1/keys/:id/revoke',
    pathParams: dashboard.ApiKeyIdParams,
    body: c.noBody(),
    responses: { 200: dashboard.ApiKey, ...errorResponses(401, 403, 404, 500) },
    summary: 'Revoke one of your API keys',
    description:
      'With the dashboard session only (and its `X-CSRF-Token`; an API key gets 403 session_required). Every instance refuses the key within the key-cache TTL (5 s by default); this one at once. ' +
      'Revoking a revoked key answers it unchanged. Its usage today still counts toward your per-user limits.',
    ...meta({ auth: 'session', tag: 'Dashboard', notFound: { code: 'key_not_found', what: 'API key' } }),
  },
  updateApiKey: {
    method: 'PATCH',
    path: '/v1/keys/:id',
    pathParams: dashboard.ApiKeyIdParams,
    body: dashboard.UpdateApiKeyBody,
    responses: { 200: dashboard.ApiKey, ...errorResponses(400, 401, 403, 404, 500) },
    summary: 'Set or remove spend caps on one of your API keys',
    description:
      'With the dashboard session only (and its `X-CSRF-Token`; an API key gets 403 session_required). A cap holds beside the plan’s per-key budget: the lower binds. ' +
      'Every instance applies it within the key-cache TTL (5 s by default); this one at once.',
    ...meta({ auth: 'session', tag: 'Dashboard', notFound: { code: 'key_not_found', what: 'API key' } }),
  },
  listJobs: {
    method: 'GET',
    path: '/v1/jobs',
    query: dashboard.JobListQuery,
    responses: { 200: dashboard.JobList, ...errorResponses(400, 401, 403, 500) },
    summary: 'Your recent async jobs (images, video, speech, transcription), newest first',
    description: 'With an API key: the jobs of that key; with the dashboard session: the jobs of all your keys.',
    ...meta({ session: true, auth: 'bearer', tag: 'Dashboard', access: 'account' }),
  },
});
