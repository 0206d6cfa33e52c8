// Prompt-cache breakpoints (`cache_control`) as the client formats carry them, and whether a
// request holds any: only Anthropic upstreams take them, every other upstream has them dropped
// and named (docs/translation.md, caching hints).
import type * as C from './canonical.ts';

/**
 * A client's `cache_control` value as a canonical breakpoint. Anything other than Anthropic's
 * `{type: 'ephemeral', ttl?}` shape is no breakpoint; the ttl goes on as sent (Anthropic judges it).
 */
export function cacheControlOf(v: unknown): C.CacheControl | undefined {
  if (typeof v !== 'object' || v === null || !('type' in v) || v.type !== 'ephemeral') return undefined;
  const ttl = 'ttl' in v && typeof v.ttl === 'string' ? v.ttl : undefined;
  return ttl === undefined ? { type: 'ephemeral' } : { type: 'ephemeral', ttl };
}

/** The last breakpoint among a message's content parts, as sent: where a joined text ends is where it applies. */
export function lastCacheControl(parts: unknown): C.CacheControl | undefined {
  if (!Array.isArray(parts)) return undefined;
  let mark: C.CacheControl | undefined;
  for (const p of parts) if (typeof p === 'object' && p !== null && 'cache_control' in p) mark = cacheControlOf(p.cache_control) ?? mark;
  return mark;
}

/** `{cacheControl}` when there is a breakpoint, else nothing: spread into a canonical part or tool. */
export const withCacheControl = (mark: C.CacheControl | undefined): { cacheControl?: C.CacheControl } => (mark ? { cacheControl: mark } : {});

const partHasMark = (p: C.Part): boolean =>
  p.type === 'tool_result' ? !!p.cacheControl || p.content.some((c) => !!c.cacheControl) : (p.type === 'text' || p.type === 'image') && !!p.cacheControl;

/** Whether the request carries any cache breakpoint (named in X-Gateway-Warnings where it is dropped). */
export function hasCacheControl(req: C.Request): boolean {
  return (
    !!req.cacheControl ||
    !!req.systemCacheControl?.some(Boolean) ||
    !!req.tools?.some((t) => t.cacheControl) ||
    req.messages.some((m) => m.content.some(partHasMark))
  );
}
