// The one way to get a model's upstream candidates for a capability, in failover order: every
// upstream whose provider type has an adapter for it in the registry (providers/registry.ts).
import type { ProviderConfig, ResolvedConfig } from '../config/schema.ts';
import { errors } from '../runtime/errors.ts';
import { adapterFor } from '../providers/registry.ts';
import type { Capability } from '../config/capabilities.ts';
import { TEXT_CAPABILITIES, servesCapability, type CapabilityAdapters } from '../providers/capabilities.ts';

type ModelConfig = ResolvedConfig['models'][number];

/** One upstream able to serve the capability: its provider, the model name there, and the adapter. */
export type Target<C extends Capability = Capability> = {
  provider: ProviderConfig;
  upstreamModel: string;
  adapter: CapabilityAdapters[C];
  /** The upstream's share under strategy weighted. */
  weight: number;
};

/** A text format's candidate (chat, Messages and Responses adapters have one type). */
export type TextTarget = Target<'chat'>;

const article = (word: string) => (/^[aeiou]/.test(word) ? 'an' : 'a');

function wrongEndpoint(model: ModelConfig, capability: Capability) {
  const message = TEXT_CAPABILITIES.has(capability)
    ? `The model '${model.id}' is ${article(model.endpoint)} ${model.endpoint} model; it cannot be used for text generation.`
    : `The model '${model.id}' is ${article(model.endpoint)} ${model.endpoint} model, not ${article(capability)} ${capability} model.`;
  return errors.invalid(message, 'model', 'model_not_supported');
}

/**
 * The model's upstreams whose provider type has an adapter for `capability`, in the configured
 * order. A model of another kind, or none of whose upstreams can serve it: model_not_supported.
 */
export function targetsFor<C extends Capability>(model: ModelConfig, capability: C, providers: Map<string, ProviderConfig>): Target<C>[] {
  if (!servesCapability(model.endpoint, capability)) throw wrongEndpoint(model, capability);
  const out: Target<C>[] = [];
  for (const u of model.upstreams) {
    const provider = providers.get(u.provider)!;
    const adapter = adapterFor(provider.type, capability);
    if (adapter) out.push({ provider, upstreamModel: u.model, adapter, weight: u.weight });
  }
  if (!out.length) {
    const what = TEXT_CAPABILITIES.has(capability) ? 'text-generation' : capability;
    throw errors.invalid(`The model '${model.id}' has no ${what} upstream.`, 'model', 'model_not_supported');
  }
  return out;
}

/** What routing reads of the catalog. */
export type ModelLookup = { model(id: string): ModelConfig | undefined; suggest(id: string): string | undefined; providers: Map<string, ProviderConfig> };

/** The model the client named; model_not_found, with the close id the catalog suggests, when it serves none. */
export function knownModel(catalog: Pick<ModelLookup, 'model' | 'suggest'>, modelId: string): ModelConfig {
  const model = catalog.model(modelId);
  if (!model) throw errors.modelNotFound(modelId, catalog.suggest(modelId));
  return model;
}

/** The model the client named (model_not_found when the catalog has none) and its candidates for `capability`. */
export function route<C extends Capability>(catalog: ModelLookup, modelId: string, capability: C): { model: ModelConfig; targets: Target<C>[] } {
  const model = knownModel(catalog, modelId);
  return { model, targets: targetsFor(model, capability, catalog.providers) };
}
