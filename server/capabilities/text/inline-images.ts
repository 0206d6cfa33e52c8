// For upstreams that read only image bytes (TextAdapter.needsInlineImages): image URLs are
// downloaded (SSRF-guarded) and inlined.
import { fetchImage, imageFetchOptions } from '../../media/fetch-image.ts';
import type { CapabilityDeps } from '../deps.ts';
import type * as C from '../../translate/canonical.ts';

export async function inlineImages(req: C.Request, services: CapabilityDeps): Promise<C.Request> {
  const opts = imageFetchOptions(services.config);
  const fix = async (p: C.Part): Promise<C.Part> => {
    if (p.type === 'image' && p.source.kind === 'url') {
      const { mediaType, data } = await fetchImage(p.source.url, opts);
      return { ...p, source: { kind: 'base64', mediaType, data } };
    }
    if (p.type === 'tool_result') return { ...p, content: (await Promise.all(p.content.map(fix))) as C.ToolResultPart['content'] };
    return p;
  };
  const messages = await Promise.all(req.messages.map(async (m) => ({ ...m, content: await Promise.all(m.content.map(fix)) })));
  return { ...req, messages };
}
