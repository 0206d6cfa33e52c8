// Reference images (`image_url`) as bytes: data: URIs decoded, HTTPS URLs downloaded through the
// SSRF guard. Done once per request, before any upstream is asked, so a failed-over attempt
// sends the same bytes again without fetching them again.
import { GatewayError, errors } from '../runtime/errors.ts';
import type { ResolvedConfig } from '../config/schema.ts';
import { MAX_IMAGE_BYTES, fetchImage, imageFetchOptions } from './fetch-image.ts';

export type ReferenceDeps = { config: ResolvedConfig };

export type ReferenceImage = { mediaType: string; data: Buffer };

const DATA_URI = /^data:(image\/[a-z0-9.+-]+)(;[a-z0-9-]+=[^;,]*)*;base64,([A-Za-z0-9+/=\s]*)$/i;

function decodeDataUri(uri: string, param: string): ReferenceImage {
  const m = DATA_URI.exec(uri);
  if (!m) throw errors.invalid(`${param} is a data: URI that is not a base64-encoded image (data:image/<type>;base64,...).`, param, 'invalid_image_url');
  const data = Buffer.from(m[3]!, 'base64');
  if (!data.length) throw errors.invalid(`${param} is an empty image.`, param, 'invalid_image_url');
  if (data.length > MAX_IMAGE_BYTES) throw errors.invalid(`${param} is larger than ${MAX_IMAGE_BYTES} bytes.`, param, 'invalid_image_url');
  return { mediaType: m[1]!.toLowerCase(), data };
}

export async function loadReferences(services: ReferenceDeps, urls: readonly string[]): Promise<ReferenceImage[]> {
  const opts = imageFetchOptions(services.config);
  return Promise.all(
    urls.map(async (url, i) => {
      const param = urls.length > 1 ? `image_url[${i}]` : 'image_url';
      if (url.startsWith('data:')) return decodeDataUri(url, param);
      try {
        const { mediaType, data } = await fetchImage(url, opts);
        return { mediaType, data: Buffer.from(data, 'base64') };
      } catch (err) {
        if (err instanceof GatewayError) throw new GatewayError(err.status, err.type, err.code, err.message, param);
        throw err;
      }
    }),
  );
}

/** `image/png` → `png` (a file name's extension for multipart uploads). */
export const extensionOf = (mediaType: string) => (mediaType.split('/')[1] ?? 'png').replace('jpeg', 'jpg').replace(/[^a-z0-9]/g, '') || 'png';

export const dataUri = (r: ReferenceImage) => `data:${r.mediaType};base64,${r.data.toString('base64')}`;
