// What `serve` logs as warnings at start-up and `config check` reports: a configuration that loads
// but will refuse some requests. One function, so the two always agree.
import { missingCredential } from '../providers/credentials.ts';
import type { ProviderConfig, ResolvedConfig } from './schema.ts';

/** Why an upstream on this provider can never work, or null (a type that cannot serve the model's endpoint is a config error). */
function unusable(p: ProviderConfig): string | null {
  const missing = missingCredential(p);
  return missing ? `${p.id} ${missing}` : null;
}

export function configWarnings(config: ResolvedConfig): string[] {
  const warnings = [...config.loadWarnings];
  for (const p of config.providers) {
    const missing = missingCredential(p);
    if (missing) warnings.push(`provider ${p.id} ${missing}: its upstreams are skipped`);
  }
  const providers = new Map(config.providers.map((p) => [p.id, p]));
  for (const m of config.models) {
    const reasons = m.upstreams.map((u) => unusable(providers.get(u.provider)!));
    if (reasons.every((r) => r !== null)) warnings.push(`model ${m.id} has no upstream that can serve it: ${[...new Set(reasons)].join('; ')}`);
  }
  return warnings;
}
