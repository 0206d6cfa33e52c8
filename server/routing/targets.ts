// The one way to get a model's upstream candidates for a capability, in failover order.
import type { ProviderConfig, ResolvedConfig } from '../config/schema.ts';
import { errors } from '../http/errors.ts';
import { TEXT_CAPABILITIES, adapterFor, servesCapability, type Adapters, type Capability, type TextAdapter, type TextFormat } from '../providers/registry.ts';

export type { TextFormat };
type ModelConfig = ResolvedConfig['models'][number];

/** One upstream able to serve the capability: its provider, the model name there, and the adapter. */
export type Candidate<C extends Capability> = { provider: ProviderConfig; upstreamModel: string; adapter: Adapters[C] };

/** A text candidate, with its wire format flattened for the engine. */
export type Target = { provider: ProviderConfig; upstreamModel: string } & TextAdapter;

const article = (word: string) => (/^[aeiou]/.test(word) ? 'an' : 'a');

function wrongEndpoint(model: ModelConfig, capability: Capability) {
  const message = TEXT_CAPABILITIES.has(capability)
    ? `The model '${model.id}' is ${article(model.endpoint)} ${model.endpoint} model; it cannot be used for text generation.`
    : `The model '${model.id}' is ${article(model.endpoint)} ${model.endpoint} model, not ${article(capability)} ${capability} model.`;
  return errors.invalid(message, 'model', 'model_not_supported');
}

/**
 * The model's upstreams whose provider type has an adapter for `capability` (providers/registry.ts),
 * in the configured order. A text model serves all three text endpoints.
 */
export function targetsFor<C extends Capability>(model: ModelConfig, capability: C, providers: Map<string, ProviderConfig>): Candidate<C>[] {
  if (!servesCapability(model.endpoint, capability)) throw wrongEndpoint(model, capability);
  const out: Candidate<C>[] = [];
  for (const u of model.upstreams) {
    const provider = providers.get(u.provider)!;
    const adapter = adapterFor(provider.type, capability);
    if (adapter) out.push({ provider, upstreamModel: u.model, adapter });
  }
  if (!out.length) {
    const what = TEXT_CAPABILITIES.has(capability) ? 'text-generation' : capability;
    throw errors.invalid(`The model '${model.id}' has no ${what} upstream.`, 'model', 'model_not_supported');
  }
  return out;
}

/** Text candidates for a client endpoint: OpenAI serves Responses natively, the rest get it translated. */
export const textTargets = (model: ModelConfig, providers: Map<string, ProviderConfig>, endpoint: 'chat' | 'messages' | 'responses' = 'chat'): Target[] =>
  targetsFor(model, endpoint, providers).map((c) => ({ provider: c.provider, upstreamModel: c.upstreamModel, ...c.adapter }));
