// What the gateway serves with no config file: each built-in provider (declared in its vendor's
// manifest) whose key is in the environment, with a model list of its current mainstream models.
import type { GatewayConfigInput } from '../config/schema.ts';
import type { BuiltinProvider } from '../providers/manifest.ts';
import { VENDORS } from '../providers/registry.ts';

/** Every built-in provider with its type: direct providers first, then those reselling others' models. */
export const builtinProviders: (BuiltinProvider & { type: string })[] = VENDORS.flatMap((v) => (v.builtins ?? []).map((b) => ({ ...b, type: v.type }))).sort(
  (a, b) => Number(a.resells ?? false) - Number(b.resells ?? false),
);

/** A config built from the environment; `enabled` lists the providers found. */
export function configFromEnvironment(env: NodeJS.ProcessEnv): { config: GatewayConfigInput; enabled: string[] } {
  const config: GatewayConfigInput = { providers: [], models: [] };
  const enabled: string[] = [];
  const taken = new Set<string>();
  for (const p of builtinProviders) {
    const key = env[p.env];
    if (!key) continue;
    enabled.push(p.id);
    config.providers!.push({ id: p.id, type: p.type, base_url: p.base_url, api_key: key });
    for (const m of p.models) {
      if (taken.has(m.id)) continue;
      taken.add(m.id);
      config.models!.push({
        id: m.id,
        endpoint: m.endpoint,
        upstreams: [{ provider: p.id, model: m.upstream ?? m.id }],
        ...(m.billing ? { billing: m.billing } : {}),
      });
    }
  }
  return { config, enabled };
}
