import { initServer, type RouterImplementation } from '@ts-rest/fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isModelIdShaped } from '../../contract/common.ts';
import { contract } from '../../contract/index.ts';
import type { Services } from './services.ts';
import { authorizeEndpoint, metadataEndpoint, revokeEndpoint, tokenEndpoint, userinfoEndpoint } from './oauth-endpoints.ts';
import { receiveUpload } from './audio-upload.ts';
import { modelStatus } from '../catalog/health-report.ts';
import { geminiModelById, geminiModelList } from '../client-formats/gemini/catalog.ts';
import { formatMarkedBy } from '../client-formats/index.ts';
import { hasHeaderIn } from '../client-formats/spec.ts';
import { errors } from '../runtime/errors.ts';
import { usageReport } from '../billing/usage-report.ts';
import { adminUsageReport } from '../billing/admin-usage.ts';
import { planLimits } from '../billing/plans.ts';
import { linkBase } from '../accounts/passwords.ts';
import { CAPABILITY_DESCRIPTORS } from '../capabilities/index.ts';
import type { AnswerMeta, CallInfo, Inference, InferenceRoute, RouteBinding } from '../capabilities/descriptor.ts';
import { createKey, listJobs, listKeys, revokeKey, sessionInfo, updateKey } from './dashboard-api.ts';
import { hostedFile } from './hosted-file.ts';
import { adminRequests, ownRequests } from './request-list.ts';
import { linkOrigin } from './link-origin.ts';
import type { RequestFacts } from '../pipeline/concern.ts';
import { labelOf } from './route-labels.ts';

const s = initServer();

export function buildRouter(services: Services) {
  const { accounts, catalog, db, counters, metrics, keys } = services;
  // Admin changes invalidate this instance's key cache at once; others follow within the TTL.
  const changed = <T>(value: T): T => {
    keys.invalidateAll();
    return value;
  };
  const audited = <T>(request: FastifyRequest, action: string, target: string, value: T, change?: object): T => {
    request.log.info({ audit: { actor: request.adminActor, action, target, ...(change && { change }) } }, `admin ${action}`);
    return value;
  };

  return s.router(contract, {
    inference: bindCapabilities(services),
    metadata: {
      // A format's clients marked by their header (Anthropic's SDKs send anthropic-version) read the catalog in its shape.
      listModels: async ({ query, request }) => {
        const shape = formatMarkedBy(hasHeaderIn(request.headers))?.catalog;
        return { status: 200, body: shape ? shape.list(catalog.entries, query) : { object: 'list', data: catalog.entries } };
      },
      retrieveModel: async ({ params, request }) => {
        const id = params['*'];
        const shape = formatMarkedBy(hasHeaderIn(request.headers))?.catalog;
        if (shape) return { status: 200, body: shape.get((m) => catalog.entry(m), (m) => catalog.suggest(m), id) };
        const entry = catalog.entry(id);
        if (!entry) throw errors.modelNotFound(id, catalog.suggest(id), 404);
        return { status: 200, body: entry };
      },
      geminiListModels: async ({ query }) => ({ status: 200, body: geminiModelList(catalog.entries, query) }),
      geminiGetModel: async ({ params }) => ({ status: 200, body: geminiModelById((id) => catalog.entry(id), params['*']) }),
      modelStatus: async ({ query }) => ({ status: 200, body: await modelStatus(services, query) }),
      usage: async ({ query, request }) => ({ status: 200, body: await usageReport(services, request.principal!, query) }),
      listRequests: async ({ query, request }) => ({ status: 200, body: await ownRequests(services, request, request.principal!, query) }),
      hostedFile: async ({ params, request, reply }) => {
        const file = await hostedFile(services, params.token);
        request.rawContentType = file.headers['content-type'];
        reply.headers(file.headers);
        return { status: 200, body: file.body };
      },
    },
    oauth: {
      authorize: async ({ query, request, reply }) => authorizeEndpoint(services, request, reply, query),
      token: async ({ body, request, reply }) => tokenEndpoint(services, request, reply, body),
      me: async ({ request, reply }) => userinfoEndpoint(services, request, reply),
      revoke: async ({ body, request, reply }) => revokeEndpoint(services, request, reply, body),
      metadata: async ({ request }) => ({ status: 200, body: metadataEndpoint(services, request) }),
      // App management routes are `access: 'account'`: the auth hook lets only the user's own keys in.
      listApps: async ({ request }) => ({ status: 200, body: { data: await services.oauth.listApps(request.principal!.userId) } }),
      createApp: async ({ request, body }) => ({ status: 201, body: await services.oauth.createApp(request.principal!.userId, body) }),
      rotateAppSecret: async ({ request, params }) => ({ status: 200, body: await services.oauth.rotateSecret(request.principal!.userId, params.id) }),
      deleteApp: async ({ request, params }) => {
        await services.oauth.deleteApp(request.principal!.userId, params.id);
        return { status: 204, body: undefined };
      },
      listConnectedApps: async ({ request }) => ({ status: 200, body: { data: await services.oauth.connectedApps(request.principal!.userId) } }),
      revokeConnectedApp: async ({ request, params }) => {
        await services.oauth.revokeConnectedApp(request.principal!.userId, params.id);
        return { status: 204, body: undefined };
      },
    },
    dashboard: {
      session: async ({ request, reply }) => ({ status: 200, body: await sessionInfo(services, request, reply) }),
      listApiKeys: async ({ request }) => ({ status: 200, body: await listKeys(services, request.principal!) }),
      createApiKey: async ({ request, body }) => {
        const created = await createKey(services, request.principal!, body.name);
        request.log.info({ audit: { actor: request.principal!.userId, action: 'key.create', target: created.id } }, 'key.create');
        return { status: 201, body: created };
      },
      revokeApiKey: async ({ request, params }) => {
        const revoked = await revokeKey(services, request.principal!, params.id);
        request.log.info({ audit: { actor: request.principal!.userId, action: 'key.revoke', target: params.id } }, 'key.revoke');
        return { status: 200, body: revoked };
      },
      updateApiKey: async ({ request, params, body }) => {
        const updated = await updateKey(services, request.principal!, params.id, body);
        request.log.info({ audit: { actor: request.principal!.userId, action: 'key.update', target: params.id, change: body } }, 'key.update');
        return { status: 200, body: updated };
      },
      listJobs: async ({ request, query }) => ({ status: 200, body: { object: 'list', data: await listJobs(services, request.principal!, query.limit, linkOrigin(services, request)) } }),
    },
    // Every change through the admin API is logged with who made it (the admin token or an admin's session).
    admin: {
      listUsers: async ({ query }) => ({ status: 200, body: { data: await accounts.listUsers(query) } }),
      createUser: async ({ body, request }) => ({ status: 201, body: audited(request, 'user.create', body.email, changed(await accounts.createUser(body))) }),
      updateUser: async ({ params, body, request }) => ({
        status: 200,
        body: audited(request, 'user.update', params.user, changed(await accounts.updateUser(params.user, body, request.principal?.userId)), body),
      }),
      // Neither the password nor the link is logged: the audit line names the action and the user.
      setUserPassword: async ({ params, body, request }) => ({
        status: 200,
        body: audited(request, 'user.set_password', params.user, await accounts.setPassword(params.user, body.password)),
      }),
      createPasswordResetLink: async ({ params, body, request }) => ({
        status: 201,
        body: audited(request, 'user.reset_link', params.user, await accounts.createResetLink(params.user, { expiresInMinutes: body.expires_in_minutes, baseUrl: linkBase(services) })),
      }),
      listKeys: async ({ query }) => ({ status: 200, body: { data: await accounts.listKeys(query.user) } }),
      createKey: async ({ body, request }) => {
        const created = await accounts.createKey(body);
        audited(request, 'key.create', body.user, { id: created.id });
        return { status: 201, body: created };
      },
      updateKey: async ({ params, body, request }) => ({ status: 200, body: audited(request, 'key.update', params.id, changed(await accounts.updateKey(params.id, body)), body) }),
      revokeKey: async ({ params, request }) => ({ status: 200, body: audited(request, 'key.revoke', params.id, changed(await accounts.revokeKey(params.id))) }),
      listPlans: async () => ({
        status: 200,
        body: {
          data: [...services.config.plans]
            .sort((a, b) => a.rank - b.rank)
            .map((p) => ({ id: p.id, rank: p.rank, ...planLimits(p), default: p.id === services.config.defaultPlan })),
        },
      }),
      adminUsage: async ({ query }) => ({ status: 200, body: await adminUsageReport(services, query) }),
      adminRequests: async ({ query, request }) => ({ status: 200, body: await adminRequests(services, request, query) }),
    },
    operator: {
      healthz: async () => ({ status: 200, body: { status: 'ok' } }),
      readyz: async () => {
        // A stopping instance is not ready whatever its stores say: balancers that route by this
        // check stop sending it requests while it finishes the ones it has (decision 0029).
        if (services.drain?.draining) return { status: 503, body: { status: 'unavailable', checks: { shutdown: 'draining: this instance is shutting down' } } };
        const checks: Record<string, string> = {};
        const probe = async (name: string, fn: () => Promise<void>) => {
          try {
            await Promise.race([fn(), new Promise((_, reject) => setTimeout(() => reject(new Error('timed out')), 2000).unref())]);
            checks[name] = 'ok';
          } catch (err) {
            checks[name] = `unavailable: ${(err as Error).message}`;
          }
        };
        await Promise.all([probe(`database (${db.kind})`, () => db.ping()), probe(`counters (${counters.kind})`, () => counters.ping())]);
        const ok = Object.values(checks).every((v) => v === 'ok');
        return ok ? { status: 200, body: { status: 'ok', checks } } : { status: 503, body: { status: 'unavailable', checks } };
      },
      metrics: async () => ({ status: 200, body: await metrics.scrape() }),
    },
  });
}

/**
 * The capabilities' routes, each bound the same way: the call's facts from the request, the
 * descriptor's run, the answer's headers, content type and the gateway's own time (a header for the
 * caller, a histogram for operators, labelled with the capability's API surface).
 */
function bindCapabilities(services: Services): RouterImplementation<Inference> {
  const bound = new Map<string, unknown>();
  for (const descriptor of CAPABILITY_DESCRIPTORS) {
    for (const [name, binding] of Object.entries(descriptor.routes)) bound.set(name, bindRoute(services, name, binding as RouteBinding<InferenceRoute>));
  }
  const unserved = Object.keys(contract.inference).filter((name) => !bound.has(name));
  if (unserved.length) throw new Error(`no capability serves the route(s) ${unserved.join(', ')}: add its descriptor to capabilities/index.ts`);
  // Built from the descriptors' table, so typed by each descriptor's bindings rather than here.
  return Object.fromEntries(bound) as RouterImplementation<Inference>;
}

type RouteInput = { request: FastifyRequest; reply: FastifyReply } & Parameters<RouteBinding<InferenceRoute>['run']>[1];

function bindRoute(services: Services, name: string, binding: RouteBinding<InferenceRoute>) {
  const { pipeline } = services;
  const label = labelOf(binding);
  const handler = async ({ request, reply, ...input }: RouteInput) => {
    const call: CallInfo = { principal: request.principal!, requestId: request.id, headers: request.headers, origin: () => linkOrigin(services, request), upload: request.upload, log: request.log };
    const facts: RequestFacts = { requestId: request.id, principal: call.principal, route: name, capability: binding.capability, format: label.format, model: modelOf(input), headers: {} };
    pipeline.opened(facts);
    let answer: Awaited<ReturnType<RouteBinding<InferenceRoute>['run']>>;
    try {
      answer = await binding.run(services, input as Parameters<RouteBinding<InferenceRoute>['run']>[1], call);
    } catch (err) {
      pipeline.failed(facts, err);
      // What the concerns add goes with an error too (the error handler keeps the reply's headers).
      reply.headers(facts.headers);
      throw err;
    }
    pipeline.answered(facts, answer);
    reply.headers(facts.headers);
    // A job took the stored upload: it outlives the response.
    if (binding.upload === 'blob') request.keepUpload?.();
    return respond(services, request, reply, answer, label.surface);
  };
  return binding.upload ? { hooks: { preValidation: receiveUpload(services.jobs.blobs, binding.upload) }, handler } : handler;
}

/**
 * The model a request names: in its body (`model`), else in its path (Gemini's `models/{model}:…`);
 * null when what it names cannot be a model id (too long, control characters: the route refuses it),
 * so that only a value of that shape is ever recorded.
 */
function modelOf(input: { body?: unknown; params?: unknown }): string | null {
  for (const part of [input.body, input.params]) {
    const model = part && typeof part === 'object' ? (part as { model?: unknown }).model : undefined;
    if (typeof model === 'string' && model) return isModelIdShaped(model) ? model : null;
  }
  // Gemini's `/v1beta/models/{model}:{method}`, matched as the rest of the path.
  const rest = input.params && typeof input.params === 'object' ? (input.params as { '*'?: unknown })['*'] : undefined;
  if (typeof rest !== 'string') return null;
  const colon = rest.lastIndexOf(':');
  const model = colon > 0 ? rest.slice(0, colon) : rest;
  return model && isModelIdShaped(model) ? model : null;
}


function respond(services: Services, request: FastifyRequest, reply: FastifyReply, answer: { status: number; body: unknown } & AnswerMeta, label: string) {
  if (answer.upstreamMs !== undefined) {
    const overheadMs = Math.max(0, reply.elapsedTime - answer.upstreamMs);
    services.metrics.overhead.observe({ endpoint: label }, overheadMs / 1000);
    reply.headers({ ...answer.headers, 'x-gateway-overhead-ms': overheadMs.toFixed(2) });
  } else if (answer.headers) {
    reply.headers(answer.headers);
  }
  if (answer.contentType) request.rawContentType = answer.contentType;
  if (answer.contentLength !== undefined && answer.contentLength !== null) reply.header('content-length', String(answer.contentLength));
  return { status: answer.status, body: answer.body };
}
