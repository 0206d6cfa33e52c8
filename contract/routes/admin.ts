// The admin API behind the CLI and the dashboard's admin pages: users, keys, plans, usage.
import { z } from 'zod';
import * as admin from '../admin.ts';
import * as dashboard from '../dashboard.ts';
import { AdminRequestListQuery, RequestList } from '../requests.ts';
import { ErrorBody, errorResponses } from '../errors.ts';
import { c, meta } from './meta.ts';

// 403: a signed-in user without the admin role, or a change without the session's CSRF token.
const adminErrors = errorResponses(400, 401, 403, 404, 500);
export const adminRoutes = c.router({
  listUsers: {
    method: 'GET',
    path: '/admin/v1/users',
    query: dashboard.UserListQuery,
    responses: { 200: z.object({ data: z.array(admin.AdminUser) }), ...adminErrors },
    summary: 'List or search users (oldest first)',
    ...meta({ session: true, auth: 'admin', tag: 'Admin' }),
  },
  createUser: {
    method: 'POST',
    path: '/admin/v1/users',
    body: admin.CreateUserBody,
    responses: { 201: admin.AdminUser, 409: ErrorBody, ...adminErrors },
    summary: 'Create a user',
    ...meta({ session: true, auth: 'admin', tag: 'Admin' }),
  },
  updateUser: {
    method: 'PATCH',
    path: '/admin/v1/users/:user',
    pathParams: admin.UserRef,
    body: dashboard.UpdateUserBody,
    responses: { 200: admin.AdminUser, ...adminErrors },
    summary: "Change a user's plan, role or spend budgets, or disable or enable the user",
    description:
      'Running gateways apply a change within the key-cache TTL (5 s by default). An admin cannot disable or demote themselves. ' +
      '`daily_budget_usd`/`monthly_budget_usd` replace the plan’s user budgets for this user (null: the plan’s again).',
    ...meta({ session: true, auth: 'admin', tag: 'Admin', notFound: { code: 'user_not_found', what: 'user' } }),
  },
  setUserPassword: {
    method: 'POST',
    path: '/admin/v1/users/:user/password',
    pathParams: admin.UserRef,
    body: admin.SetPasswordBody,
    responses: { 200: admin.PasswordSet, 409: ErrorBody, ...adminErrors },
    summary: "Set a user's password",
    description:
      'The sign-up rules apply (400 `weak_password` names the broken one). Ends every dashboard session of the user and voids their unused reset links. ' +
      '409 `password_signin_disabled` when `auth.local.enabled` is false. The password is never logged.',
    ...meta({ session: true, auth: 'admin', tag: 'Admin', notFound: { code: 'user_not_found', what: 'user' } }),
  },
  createPasswordResetLink: {
    method: 'POST',
    path: '/admin/v1/users/:user/password-reset',
    pathParams: admin.UserRef,
    body: admin.ResetLinkBody,
    responses: { 201: admin.PasswordResetLink, 409: ErrorBody, ...adminErrors },
    summary: 'Make a single-use password-reset link for a user',
    description:
      'The link opens a page where the user chooses a password (sign-up rules); it works once, until `expires_at`, and a newer link voids it. ' +
      'Using it ends the user’s other sessions. Its address is `public_url`, else the address the gateway listens on (never the request’s Host). ' +
      '409 `user_disabled` for a disabled user, `password_signin_disabled` when `auth.local.enabled` is false.',
    ...meta({ session: true, auth: 'admin', tag: 'Admin', notFound: { code: 'user_not_found', what: 'user' }, noStore: true }),
  },
  listKeys: {
    method: 'GET',
    path: '/admin/v1/keys',
    query: admin.KeyListQuery,
    responses: { 200: z.object({ data: z.array(admin.AdminApiKey) }), ...adminErrors },
    summary: 'List API keys (never the keys themselves)',
    ...meta({ session: true, auth: 'admin', tag: 'Admin' }),
  },
  createKey: {
    method: 'POST',
    path: '/admin/v1/keys',
    body: admin.CreateKeyBody,
    responses: { 201: admin.AdminCreatedApiKey, ...adminErrors },
    summary: 'Create an API key (plaintext returned once)',
    ...meta({ session: true, auth: 'admin', tag: 'Admin', noStore: true }),
  },
  revokeKey: {
    method: 'POST',
    path: '/admin/v1/keys/:id/revoke',
    pathParams: admin.KeyRef,
    body: c.noBody(),
    responses: { 200: admin.AdminApiKey, ...adminErrors },
    summary: 'Revoke an API key',
    description: 'Running gateways stop accepting it within the key-cache TTL (5 s by default).',
    ...meta({ session: true, auth: 'admin', tag: 'Admin', notFound: { code: 'key_not_found', what: 'API key' } }),
  },
  updateKey: {
    method: 'PATCH',
    path: '/admin/v1/keys/:id',
    pathParams: admin.KeyRef,
    body: dashboard.AdminUpdateApiKeyBody,
    responses: { 200: admin.AdminApiKey, ...adminErrors },
    summary: 'Set or remove spend caps on an API key; switch the capture of its bodies',
    description: 'A cap holds beside the plan’s per-key budget (the lower binds). Running gateways apply it within the key-cache TTL (5 s by default).',
    ...meta({ session: true, auth: 'admin', tag: 'Admin', notFound: { code: 'key_not_found', what: 'API key' } }),
  },
  listPlans: {
    method: 'GET',
    path: '/admin/v1/plans',
    responses: { 200: z.object({ data: z.array(dashboard.Plan) }), ...adminErrors },
    summary: 'The configured plans, lowest rank first',
    ...meta({ session: true, auth: 'admin', tag: 'Admin' }),
  },
  adminUsage: {
    method: 'GET',
    path: '/admin/v1/usage',
    query: dashboard.AdminUsageQuery,
    responses: { 200: dashboard.AdminUsageReport, ...adminErrors },
    summary: 'Usage across users: top users and models, per-day totals',
    ...meta({ session: true, auth: 'admin', tag: 'Admin' }),
  },
  adminRequests: {
    method: 'GET',
    path: '/admin/v1/requests',
    query: AdminRequestListQuery,
    responses: { 200: RequestList, ...adminErrors },
    summary: 'The request log of every user, newest first',
    description: 'Like `GET /v1/requests`, across all users, with a `user` filter; requests refused before a credential was known (401) are here too.',
    ...meta({ session: true, auth: 'admin', tag: 'Admin' }),
  },
});
