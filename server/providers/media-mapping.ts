// What every image/video adapter does with the normalized request: map the client's size or
// ratio onto the upstream's vocabulary and strip fields it has no place for, naming each change.
import type { AdapterCall } from './adapter.ts';
import { nearestRatio, nearestSize, parsePixels, pixels, ratio, ratioAsPixels } from '../media/geometry.ts';
import type { MediaRequest } from '../media/request.ts';

type Warn = Pick<AdapterCall, 'warn'>;

/** The upstream pixel size for the request (null: none asked, the upstream's default). */
export function mapToSize(req: MediaRequest, allowed: readonly string[], call: Warn): string | null {
  if (req.pixels) {
    const size = nearestSize(req.pixels, allowed);
    if (size !== pixels(req.pixels)) call.warn(`size ${pixels(req.pixels)} changed to ${size}, the nearest this model makes`);
    return size;
  }
  if (req.ratio) {
    const size = nearestSize(ratioAsPixels(req.ratio), allowed);
    const made = ratio(parsePixels(size));
    call.warn(made === ratio(req.ratio) ? `aspect ratio ${ratio(req.ratio)} sent as size ${size}` : `aspect ratio ${ratio(req.ratio)} changed to size ${size} (${made}), the nearest this model makes`);
    return size;
  }
  return null;
}

/** The upstream aspect ratio for the request (null: none asked, the upstream's default). */
export function mapToRatio(req: MediaRequest, allowed: readonly string[], call: Warn): string | null {
  const shape = req.pixels ?? req.ratio;
  if (!shape) return null;
  const r = nearestRatio(shape, allowed);
  const asked = req.pixels ? `size ${pixels(req.pixels)}` : `aspect ratio ${ratio(shape)}`;
  if (req.pixels) call.warn(`${asked} sent as aspect ratio ${r}${r === ratio(shape) ? '' : ' (the nearest this model makes)'}`);
  else if (r !== ratio(shape)) call.warn(`${asked} changed to ${r}, the nearest this model makes`);
  return r;
}

/** The request's optional fields an upstream cannot take: each one sent is named and left out. */
export type Field = 'negative_prompt' | 'seed' | 'quality' | 'style';

const valueOf = (req: MediaRequest, f: Field) =>
  f === 'negative_prompt' ? req.negativePrompt : f === 'seed' ? req.seed : f === 'quality' ? req.quality : req.style;

export function stripUnsupported(req: MediaRequest, supported: readonly Field[], call: Warn): void {
  const stripped = (['negative_prompt', 'seed', 'quality', 'style'] as const).filter((f) => valueOf(req, f) !== null && !supported.includes(f));
  if (stripped.length) call.warn(`not supported by this model, stripped: ${stripped.join(', ')}`);
}
