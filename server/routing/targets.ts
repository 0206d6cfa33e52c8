// A model's upstream candidates for one capability, in failover order: every upstream whose
// provider type has an adapter for it in the registry (providers/registry.ts).
import type { ProviderConfig, ResolvedConfig } from '../config/schema.ts';
import { errors } from '../http/errors.ts';
import { adapterFor, TEXT_CAPABILITIES, type Capability, type CapabilityAdapters } from '../providers/registry.ts';

type ModelConfig = ResolvedConfig['models'][number];

export type Target<C extends Capability = Capability> = { provider: ProviderConfig; upstreamModel: string; adapter: CapabilityAdapters[C] };

/** A text format's candidate (chat, Messages and Responses adapters have one type). */
export type TextTarget = Target<'chat'>;

/** What routing reads of the catalog. */
export type ModelLookup = { model(id: string): ModelConfig | undefined; providers: Map<string, ProviderConfig> };

const isText = (c: Capability) => TEXT_CAPABILITIES.has(c);

/** Any text model serves all three text formats; every other capability only its own models. */
const serves = (endpoint: Capability, capability: Capability) => endpoint === capability || (isText(endpoint) && isText(capability));

function notThisKind(model: ModelConfig, capability: Capability): string {
  if (isText(capability)) return `The model '${model.id}' is a ${model.endpoint} model; it cannot be used for text generation.`;
  return `The model '${model.id}' is a ${model.endpoint} model, not a${/^[aeiou]/.test(capability) ? 'n' : ''} ${capability} model.`;
}

const noUpstream = (model: ModelConfig, capability: Capability) =>
  isText(capability) ? `The model '${model.id}' has no text-generation upstream.` : `The model '${model.id}' has no upstream that serves ${capability}.`;

/**
 * The model `modelId` and its candidates for `capability`. Unknown model: model_not_found; a
 * model of another kind, or none of whose upstreams can serve the capability: model_not_supported.
 */
export function targetsFor<C extends Capability>(catalog: ModelLookup, modelId: string, capability: C): { model: ModelConfig; targets: Target<C>[] } {
  const model = catalog.model(modelId);
  if (!model) throw errors.modelNotFound(modelId);
  if (!serves(model.endpoint, capability)) throw errors.invalid(notThisKind(model, capability), 'model', 'model_not_supported');
  const targets: Target<C>[] = [];
  for (const u of model.upstreams) {
    const provider = catalog.providers.get(u.provider)!;
    const adapter = adapterFor(provider.type, capability);
    if (adapter) targets.push({ provider, upstreamModel: u.model, adapter });
  }
  if (!targets.length) throw errors.invalid(noUpstream(model, capability), 'model', 'model_not_supported');
  return { model, targets };
}
