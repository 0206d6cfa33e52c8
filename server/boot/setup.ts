// What an operator must set when the catalog is empty: the start-up log and the dashboard (through
// GET /v1/session) say the same, from the one list of built-in providers (environment-config.ts).
import type { z } from 'zod';
import type { CatalogSetup } from '../../contract/dashboard.ts';
import type { ResolvedConfig } from '../config/schema.ts';
import { builtinProviders } from './environment-config.ts';

/** `ResolvedConfig.source` of a configuration built from the environment's API keys (load.ts). */
export const ENVIRONMENT_SOURCE = '(environment)';

/** What enables models, while the catalog has none; null once it has some. */
export function catalogSetup(config: ResolvedConfig): z.infer<typeof CatalogSetup> | null {
  if (config.models.length > 0) return null;
  return {
    problem: config.source === ENVIRONMENT_SOURCE ? 'no_provider_key' : 'no_models_in_config_file',
    provider_keys: builtinProviders.map((p) => ({ provider: p.id, variable: p.env })),
    config_file: { variable: 'GATEWAY_CONFIG', default_path: 'gateway.config.yaml', example: 'gateway.config.example.yaml' },
  };
}

/** The start-up line for an empty catalog: what to set, with the variables' exact names. */
export function setupAdvice(setup: z.infer<typeof CatalogSetup>, source: string): string {
  const keys = setup.provider_keys.map((k) => `${k.variable} (${k.provider})`).join(', ');
  const file = `${setup.config_file.variable}=<file> or ./${setup.config_file.default_path}; ${setup.config_file.example} shows every field`;
  return setup.problem === 'no_provider_key'
    ? `the catalog is empty: no config file, and no provider API key in the environment. Set one or more of ${keys} and restart, or use a config file (${file}).`
    : `the catalog is empty: the config file ${source} defines no models. Add providers and models to it (${setup.config_file.example} shows every field), or remove it and set a provider API key: ${keys}.`;
}
