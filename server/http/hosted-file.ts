// GET /v1/files/:token: a stored output behind a signed, expiring link (blobs/signed-url.ts).
import type { Readable } from 'node:stream';
import { errors } from '../runtime/errors.ts';
import type { Services } from './services.ts';

const notFound = () => errors.notFound('No such file: the link is unknown, altered or expired.', 'file_not_found', 'token');

export async function hostedFile(services: Services, token: string): Promise<{ body: Readable; headers: Record<string, string> }> {
  const now = services.clock.now();
  const key = services.urls.verify(token, now);
  const blob = key ? await services.jobs.blobs.get(key) : null;
  if (!blob) throw notFound();
  const expires = Number(token.split('.')[1]) * 1000;
  return {
    body: blob.body,
    headers: {
      'content-type': blob.contentType,
      'content-length': String(blob.size),
      // Never changes while it lives; caches keep it no longer than the link.
      'cache-control': `private, max-age=${Math.max(0, Math.floor((expires - now) / 1000))}, immutable`,
      'x-content-type-options': 'nosniff',
      // Generated files are served from the gateway's own origin: an SVG or anything an upstream
      // mislabels must not run script there.
      'content-security-policy': "default-src 'none'; img-src 'self'; media-src 'self'; style-src 'unsafe-inline'; sandbox",
    },
  };
}
