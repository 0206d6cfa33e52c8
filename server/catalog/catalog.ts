import type { CatalogEntry } from '../../contract/models.ts';
import type { ProviderConfig, ResolvedConfig } from '../config/schema.ts';
import { UNKNOWN_PRICES, type MetadataStore, type Resolved, type Source } from './metadata.ts';
import { resolveWeights } from '../billing/buckets.ts';
import { tokensPerUnit, unitOf } from '../config/billing-rules.ts';
import { closest } from '../config/schema-keys.ts';

type ModelConfig = ResolvedConfig['models'][number];

const METADATA_FIELDS = [
  'context_window',
  'max_output_tokens',
  'supports_vision',
  'supports_tools',
  'supports_function_calling',
  'supports_reasoning',
  'supports_json_mode',
  'supports_audio_input',
  'supports_image_output',
  'supports_streaming',
  'input_modalities',
  'output_modalities',
  'modality',
  'tokenizer',
  'description',
  'pricing',
] as const satisfies readonly (keyof Resolved)[];

/**
 * Prices field by field: the config's where it states one (null included: "unknown"), else the
 * metadata's. `pricing: null` in the config makes them all unknown; no prices anywhere: null.
 */
function pricingOf(m: ModelConfig, resolved: CatalogEntry['pricing'] | undefined): CatalogEntry['pricing'] {
  if (m.pricing === null) return null;
  if (m.pricing === undefined) return resolved ? { ...UNKNOWN_PRICES, ...resolved } : null;
  const merged: NonNullable<CatalogEntry['pricing']> = { ...UNKNOWN_PRICES, ...resolved };
  for (const [field, value] of Object.entries(m.pricing)) if (value !== undefined) merged[field as keyof typeof merged] = value;
  return merged;
}

/**
 * A catalog entry (docs/api.md, "Models"): what the config says wins, then resolved metadata, else null —
 * never 0 or false for something unknown.
 */
export function catalogEntry(m: ModelConfig, providerName: string, created: number, resolved: { source: Source; fields: Resolved } | null = null): CatalogEntry {
  const fromConfig: Partial<Record<(typeof METADATA_FIELDS)[number], unknown>> = { ...m, pricing: pricingOf(m, resolved?.fields.pricing) };
  // One flag, two names: whichever the config states counts for both.
  const tools = m.supports_tools ?? m.supports_function_calling;
  if (tools !== undefined) fromConfig.supports_tools = fromConfig.supports_function_calling = tools;
  const fields = Object.fromEntries(
    METADATA_FIELDS.map((f) => [f, fromConfig[f] !== undefined ? fromConfig[f] : (resolved?.fields[f] ?? null)]),
  ) as Pick<CatalogEntry, (typeof METADATA_FIELDS)[number]>;
  return {
    id: m.id,
    object: 'model',
    created,
    owned_by: providerName,
    endpoint: m.endpoint,
    token_multiplier: m.token_multiplier,
    billing: { unit: unitOf(m.endpoint), tokens_per_unit: tokensPerUnit(m), weights: resolveWeights(m.billing?.weights) },
    premium: m.premium,
    required_plan: m.required_plan,
    ...fields,
    metadata_source: resolved?.source ?? null,
    metadata_status: resolved ? 'known' : 'unknown',
  };
}

export class Catalog {
  entries: CatalogEntry[] = [];
  /** Providers by id, built once: request paths look upstreams up here. */
  readonly providers: Map<string, ProviderConfig>;
  private readonly byId: Map<string, ModelConfig>;
  private entryById = new Map<string, CatalogEntry>();
  private readonly created: number;

  constructor(
    private readonly config: Pick<ResolvedConfig, 'models' | 'providers'>,
    loadedAt = new Date(),
    private readonly metadata: MetadataStore | null = null,
  ) {
    this.created = Math.floor(loadedAt.getTime() / 1000);
    this.byId = new Map(config.models.map((m) => [m.id, m]));
    this.providers = new Map(config.providers.map((p) => [p.id, p]));
    this.rebuild();
  }

  /** Recomputes the entries (after metadata was refreshed). */
  rebuild(): void {
    this.entries = this.config.models.map((m) => catalogEntry(m, m.upstreams[0]!.provider, this.created, this.metadata?.resolve(m, this.providers) ?? null));
    this.entryById = new Map(this.entries.map((e) => [e.id, e]));
  }

  /** The published entry: config and resolved metadata (what is unknown is null). */
  entry(id: string): CatalogEntry | undefined {
    return this.entryById.get(id);
  }

  model(id: string): ModelConfig | undefined {
    return this.byId.get(id);
  }

  /**
   * A served id the client probably meant by `id`, which the catalog does not have: the same id in
   * other letter case, the part after a vendor prefix (`openai/gpt-4o-mini`) or the id with one
   * (`gpt-4o-mini` for `openai/gpt-4o-mini`), else one within two edits (ids of 4 characters or more:
   * shorter ones are all within two edits of each other).
   */
  suggest(id: string): string | undefined {
    const ids = [...this.byId.keys()];
    const lower = id.toLowerCase();
    const tail = (s: string) => s.slice(s.lastIndexOf('/') + 1).toLowerCase();
    const same = ids.find((k) => k.toLowerCase() === lower) ?? ids.find((k) => k.toLowerCase() === tail(id)) ?? ids.find((k) => tail(k) === lower);
    if (same || id.length < 4) return same;
    const near = closest(lower, ids.map((k) => k.toLowerCase()));
    return near === undefined ? undefined : ids.find((k) => k.toLowerCase() === near);
  }
}
