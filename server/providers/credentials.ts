// Whether a provider can be called at all: the credential its vendor requires. Failover names and
// skips a provider without one; `config check` and start-up warn about it.
import { VENDORS, vendorOf } from './registry.ts';

/**
 * Headers that carry a credential: a provider sending one of them needs no api_key. Any vendor's
 * counts for every provider, since a proxy in front of one may take another's.
 */
export const credentialHeaders: ReadonlySet<string> = new Set(VENDORS.flatMap((v) => v.client.credentialHeaders));

/** Why a provider cannot be called at all (`has no api_key`), or null: failover names it and skips it. */
export function missingCredential(p: { type?: string; api_key?: string; api_keys?: readonly unknown[]; headers?: Record<string, string> }): string | null {
  const client = p.type ? vendorOf(p.type)?.client : undefined;
  if (!client || p.api_key || p.api_keys?.some((k) => k !== null) || !client.needsApiKey(p)) return null;
  return Object.keys(p.headers ?? {}).some((h) => credentialHeaders.has(h.toLowerCase())) ? null : 'has no api_key';
}
