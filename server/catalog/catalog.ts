import type { CatalogEntry } from '../../contract/models.ts';
import type { ResolvedConfig } from '../config/schema.ts';

type ModelConfig = ResolvedConfig['models'][number];

const orNull = <T>(v: T | undefined): T | null => (v === undefined ? null : v);

function pricing(m: ModelConfig): CatalogEntry['pricing'] {
  if (!m.pricing) return null;
  return {
    prompt: orNull(m.pricing.prompt),
    completion: orNull(m.pricing.completion),
    image: orNull(m.pricing.image),
    request: orNull(m.pricing.request),
  };
}

/** A catalog entry (spec 2.6) from the config alone: what the config does not say is null. */
export function catalogEntry(m: ModelConfig, providerName: string, created: number): CatalogEntry {
  const tools = m.supports_tools ?? m.supports_function_calling ?? null;
  return {
    id: m.id,
    object: 'model',
    created,
    owned_by: providerName,
    endpoint: m.endpoint,
    token_multiplier: m.token_multiplier,
    premium: m.premium,
    required_plan: m.required_plan,
    context_window: orNull(m.context_window),
    max_output_tokens: orNull(m.max_output_tokens),
    supports_vision: orNull(m.supports_vision),
    supports_tools: tools,
    supports_function_calling: tools,
    supports_reasoning: orNull(m.supports_reasoning),
    supports_json_mode: orNull(m.supports_json_mode),
    supports_audio_input: orNull(m.supports_audio_input),
    supports_image_output: orNull(m.supports_image_output),
    supports_streaming: orNull(m.supports_streaming),
    input_modalities: orNull(m.input_modalities),
    output_modalities: orNull(m.output_modalities),
    modality: orNull(m.modality),
    tokenizer: orNull(m.tokenizer),
    description: orNull(m.description),
    pricing: pricing(m),
    // Resolution from OpenRouter/Poe metadata comes with the catalog-metadata work.
    metadata_source: null,
    metadata_status: 'unknown',
  };
}

export class Catalog {
  readonly entries: CatalogEntry[];
  private readonly byId: Map<string, ModelConfig>;

  constructor(config: Pick<ResolvedConfig, 'models' | 'providers'>, loadedAt = new Date()) {
    const created = Math.floor(loadedAt.getTime() / 1000);
    this.entries = config.models.map((m) => catalogEntry(m, m.upstreams[0]!.provider, created));
    this.byId = new Map(config.models.map((m) => [m.id, m]));
  }

  model(id: string): ModelConfig | undefined {
    return this.byId.get(id);
  }
}
