// What `serve` logs as warnings at start-up and `config check` reports: a configuration that loads
// but will refuse some requests. One function, so the two always agree.
import { missingCredential } from '../providers/credentials.ts';
import { adapterFor, isBuilt, type Capability } from '../providers/registry.ts';
import type { ProviderConfig, ResolvedConfig } from './schema.ts';

/** Why an upstream on this provider can never serve a model of this endpoint, or null. */
function unusable(p: ProviderConfig, endpoint: Capability): string | null {
  const missing = missingCredential(p);
  if (missing) return `${p.id} ${missing}`;
  if (isBuilt(endpoint) && !adapterFor(p.type, endpoint)) return `${p.id} (${p.type}) does not serve ${endpoint}`;
  return null;
}

export function configWarnings(config: ResolvedConfig): string[] {
  const warnings = [...config.loadWarnings];
  for (const p of config.providers) {
    const missing = missingCredential(p);
    if (missing) warnings.push(`provider ${p.id} ${missing}: its upstreams are skipped`);
  }
  const providers = new Map(config.providers.map((p) => [p.id, p]));
  for (const m of config.models) {
    const reasons = m.upstreams.map((u) => unusable(providers.get(u.provider)!, m.endpoint));
    if (reasons.every((r) => r !== null)) warnings.push(`model ${m.id} has no upstream that can serve it: ${[...new Set(reasons)].join('; ')}`);
  }
  return warnings;
}
