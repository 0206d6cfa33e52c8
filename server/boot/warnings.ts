// What `serve` logs as warnings at start-up and `config check` reports: a configuration that loads
// but will refuse some requests. One function, so the two always agree; GET /v1/models/status
// marks the same unservable models `misconfigured`.
import { missingCredential } from '../providers/credentials.ts';
import type { ProviderConfig, ResolvedConfig } from '../config/schema.ts';

/** Why an upstream on this provider can never work, or null (a type that cannot serve the model's endpoint is a config error). */
function unusable(p: ProviderConfig): string | null {
  const missing = missingCredential(p);
  return missing ? `${p.id} ${missing}` : null;
}

/** The models none of whose upstreams can work, in config order, each with why (`claude has no api_key`). */
export function unservableModels(config: ResolvedConfig): Map<string, string> {
  const providers = new Map(config.providers.map((p) => [p.id, p]));
  const out = new Map<string, string>();
  for (const m of config.models) {
    const reasons = m.upstreams.map((u) => unusable(providers.get(u.provider)!));
    if (reasons.every((r) => r !== null)) out.set(m.id, [...new Set(reasons)].join('; '));
  }
  return out;
}

export function configWarnings(config: ResolvedConfig): string[] {
  const warnings = [...config.loadWarnings];
  for (const p of config.providers) {
    const missing = missingCredential(p);
    if (missing) warnings.push(`provider ${p.id} ${missing}: its upstreams are skipped`);
  }
  for (const [model, why] of unservableModels(config)) warnings.push(`model ${model} has no upstream that can serve it: ${why}`);
  // Links in mail leave the machine: without public_url they name the address the gateway listens
  // on (never a request's Host), which a reader elsewhere cannot open.
  if (config.smtp && !config.publicUrl) warnings.push('smtp is set but public_url is not: password-reset mails would link to the address the gateway listens on; set public_url to the address users open');
  // Legal (a rebuild can restore the sums while raw rows remain), but usage reports would show
  // nothing for days the ledger still holds.
  const { retention_days: raw, aggregate_retention_days: sums } = config.ledger;
  if (sums < raw) warnings.push(`ledger.aggregate_retention_days (${sums}) is shorter than ledger.retention_days (${raw}): usage reports lose days whose raw rows are still kept; keep the daily sums at least as long`);
  return warnings;
}
