import { initServer } from '@ts-rest/fastify';
import type { FastifyRequest } from 'fastify';
import { contract } from '../../contract/index.ts';
import type { Services } from './services.ts';
import { authorizeEndpoint, metadataEndpoint, revokeEndpoint, tokenEndpoint, userinfoEndpoint } from './oauth-endpoints.ts';
import { generateMedia, imageJob } from '../endpoints/images.ts';
import { SPEECH_JOB, speech, submitSpeechJob } from '../endpoints/speech.ts';
import { TRANSCRIPTION_JOB, submitTranscriptionJob, transcription } from '../endpoints/transcriptions.ts';
import { receiveUpload } from './audio-upload.ts';
import { runText } from '../endpoints/text/engine.ts';
import { embeddings } from '../endpoints/embeddings.ts';
import { moderations } from '../endpoints/moderation.ts';
import { modelStatus } from '../catalog/health-report.ts';
import { usageReport } from '../billing/usage-report.ts';
import { adminUsageReport } from '../billing/admin-usage.ts';
import { planLimits } from '../billing/plans.ts';
import { linkBase } from '../accounts/passwords.ts';
import { createKey, listJobs, listKeys, revokeKey, sessionInfo } from './dashboard-api.ts';
import { hostedFile } from './hosted-file.ts';
import { linkOrigin } from './link-origin.ts';
import { chatFormat, messagesFormat, responsesFormat } from '../endpoints/text/formats.ts';
import { itemReferenceIds, responsesToCanonical } from '../translate/responses.ts';
import { chatToCanonical } from '../translate/chat.ts';
import { messagesToCanonical } from '../translate/messages.ts';

const s = initServer();

export function buildRouter(services: Services) {
  // The gateway's own time, upstream excluded: a header for the caller, a histogram for operators.
  const send = (reply: { elapsedTime: number; headers(h: Record<string, string>): unknown }, result: { body: unknown; headers: Record<string, string>; upstreamMs: number }, endpoint: string) => {
    const overheadMs = Math.max(0, reply.elapsedTime - result.upstreamMs);
    services.metrics.overhead.observe({ endpoint }, overheadMs / 1000);
    reply.headers({ ...result.headers, 'x-gateway-overhead-ms': overheadMs.toFixed(2) });
    return { status: 200 as const, body: result.body as never };
  };
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

  /** A finished job's output, streamed with its own content type. */
  const jobDownload =
    (kind: string) =>
    async ({ params, request, reply }: { params: { id: string }; request: FastifyRequest; reply: { headers(h: Record<string, string>): unknown } }) => {
      const out = await services.jobs.download(request.principal!, params.id, [kind]);
      request.rawContentType = out.contentType;
      reply.headers({ 'content-type': out.contentType, 'content-length': String(out.size) });
      return { status: 200 as const, body: out.body as never };
    };

  return s.router(contract, {
    inference: {
      chatCompletions: async ({ body, request, reply }) => {
        const wantsUsage = body.stream_options?.include_usage === true;
        const decoded = chatToCanonical(body);
        const result = await runText(services, {
          format: chatFormat(wantsUsage, !!decoded.webSearch, services.search !== null),
          requestId: request.id,
          principal: request.principal!,
          raw: body,
          request: decoded,
          clientHeaders: {},
          log: request.log,
        });
        return send(reply, result, 'chat');
      },
      messages: async ({ body, request, reply }) => {
        const decoded = messagesToCanonical(body);
        const result = await runText(services, {
          format: messagesFormat(!!decoded.request.webSearch, services.search !== null, decoded.nativeOnly),
          requestId: request.id,
          principal: request.principal!,
          raw: body,
          request: decoded.request,
          clientHeaders: {
            'anthropic-version': request.headers['anthropic-version'] as string | undefined,
            'anthropic-beta': request.headers['anthropic-beta'] as string | undefined,
          },
          log: request.log,
        });
        return send(reply, result, 'messages');
      },
      responses: async ({ body, request, reply }) => {
        const ids = itemReferenceIds(body);
        const decoded = responsesToCanonical(body, ids.length ? await services.items.lookup(ids) : new Map());
        const result = await runText(services, {
          format: responsesFormat(body, decoded.builtIns, services.search !== null, decoded.nativeOnly, (items) => services.items.remember(items)),
          requestId: request.id,
          principal: request.principal!,
          raw: body,
          request: decoded.request,
          clientHeaders: {},
          log: request.log,
        });
        return send(reply, result, 'responses');
      },
      imageGenerations: async ({ body, request, reply }) => {
        const r = await generateMedia(services, { principal: request.principal!, requestId: request.id, origin: linkOrigin(services, request), log: request.log }, body);
        send(reply, r, 'images');
        return { status: r.status, body: r.body } as never;
      },
      imageJob: async ({ params, request }) => ({ status: 200, body: await imageJob(services, request.principal!, params.id, linkOrigin(services, request)) }),
      speech: async ({ body, request, reply }) => {
        const r = await speech(services, { principal: request.principal!, requestId: request.id, log: request.log }, body);
        send(reply, r, 'speech');
        if (r.kind === 'audio') {
          request.rawContentType = r.contentType;
          if (r.length !== null) reply.header('content-length', String(r.length));
        } else if (r.status === 200) {
          // The timestamps JSON on a route whose success is raw audio: sent as text, typed in onSend.
          request.rawContentType = 'application/json; charset=utf-8';
          return { status: 200, body: JSON.stringify(r.body) } as never;
        }
        return { status: r.status, body: r.body } as never;
      },
      speechJobCreate: async ({ body, request }) => ({ status: 202, body: await submitSpeechJob(services, request.principal!, body) }),
      speechJobStatus: async ({ params, request }) => ({ status: 200, body: await services.jobs.status(request.principal!, params.id, [SPEECH_JOB]) }),
      speechJobDownload: jobDownload(SPEECH_JOB),
      transcriptions: {
        hooks: { preValidation: receiveUpload(services.jobs.blobs, 'file') },
        handler: async ({ body, request, reply }) => {
          const r = await transcription(services, { principal: request.principal!, requestId: request.id, upload: request.upload!, log: request.log }, body as never);
          send(reply, r, 'transcriptions');
          request.rawContentType = r.contentType;
          return { status: 200, body: r.body } as never;
        },
      },
      transcriptionJobCreate: {
        hooks: { preValidation: receiveUpload(services.jobs.blobs, 'blob') },
        handler: async ({ body, request }) => {
          const job = await submitTranscriptionJob(services, request.principal!, request.upload!, body as never);
          request.keepUpload?.();
          return { status: 202, body: job };
        },
      },
      transcriptionJobStatus: async ({ params, request }) => ({ status: 200, body: await services.jobs.status(request.principal!, params.id, [TRANSCRIPTION_JOB]) }),
      transcriptionJobDownload: jobDownload(TRANSCRIPTION_JOB),
      embeddings: async ({ body, request, reply }) => send(reply, await embeddings(services, request.principal!, request.id, body, request.log), 'embeddings'),
      moderations: async ({ body, request, reply }) => send(reply, await moderations(services, request.principal!, request.id, body, request.log), 'moderations'),
    },
    metadata: {
      listModels: async () => ({ status: 200, body: { object: 'list', data: catalog.entries } }),
      modelStatus: async ({ query }) => ({ status: 200, body: await modelStatus(services, query) }),
      usage: async ({ query, request }) => ({ status: 200, body: await usageReport(services, request.principal!, query) }),
      hostedFile: async ({ params, request, reply }) => {
        const file = await hostedFile(services, params.token);
        request.rawContentType = file.headers['content-type'];
        reply.headers(file.headers);
        return { status: 200, body: file.body as never };
      },
    },
    oauth: {
      authorize: async ({ query, request, reply }) => authorizeEndpoint(services, request, reply as never, query),
      token: async ({ body, request, reply }) => tokenEndpoint(services, request, reply as never, body),
      me: async ({ request, reply }) => userinfoEndpoint(services, request, reply as never),
      revoke: async ({ body, request, reply }) => revokeEndpoint(services, request, reply as never, body),
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
      session: async ({ request, reply }) => ({ status: 200, body: await sessionInfo(services, request, reply as never) }),
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
    },
    operator: {
      healthz: async () => ({ status: 200, body: { status: 'ok' } }),
      readyz: async () => {
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
      metrics: async () => ({ status: 200, body: await metrics.registry.metrics() }),
    },
  });
}
