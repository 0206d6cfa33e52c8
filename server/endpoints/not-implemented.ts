import type { FastifyRequest } from 'fastify';
import { errors } from '../http/errors.ts';

/**
 * Routes of the contract whose capability lands in a later release. They authenticate and validate
 * like the real endpoint, then answer 501 server_error/not_implemented — never a fake success.
 * Listed in the README.
 */
export const notImplemented: Record<string, string> = {
  '/v1/audio/transcriptions': 'Speech to text',
  '/v1/audio/transcriptions/jobs': 'Async transcription jobs',
  '/v1/audio/transcriptions/jobs/:id/status': 'Async transcription jobs',
  '/v1/audio/transcriptions/jobs/:id/download': 'Async transcription jobs',
};

/**
 * Multipart routes answer 501 right after authentication, before the upload is read.
 * JSON routes validate their body first (so the contract's rules already hold), then answer 501.
 */
export function notImplementedBeforeBody(request: FastifyRequest): void {
  const route = (request.routeOptions.config as { tsRestRoute?: { contentType?: string } }).tsRestRoute;
  const what = notImplemented[request.routeOptions.url ?? ''];
  if (what && route?.contentType === 'multipart/form-data') throw errors.notImplemented(what);
}

/** The handler of a route whose capability is not built yet. */
export const notImplementedHandler = async ({ appRoute }: { appRoute: { path: string } }): Promise<never> => {
  throw errors.notImplemented(notImplemented[appRoute.path] ?? appRoute.path);
};
