// What a public model list gives the catalog (context windows, modalities, prices) and how one
// vendor's entries read: each list is a folder of its own (providers/<vendor>/catalog.ts) listed
// in the registry; the catalog's metadata store knows none of them by name.
import { ModelPricing, type CatalogEntry } from '../../contract/models.ts';
import type { JsonObject, JsonValue } from '../upstream/json.ts';

/** A list's name: its key under `catalog_metadata` in the config, in the stored lists and in `metadata_source`. */
export type CatalogSourceId = NonNullable<CatalogEntry['metadata_source']>;

/** The catalog fields metadata can supply. */
export type Resolved = Partial<Omit<CatalogEntry, 'id' | 'object' | 'created' | 'owned_by' | 'endpoint' | 'token_multiplier' | 'premium' | 'required_plan' | 'metadata_source' | 'metadata_status'>>;

export type CatalogSource = {
  id: CatalogSourceId;
  /** One entry of its list (an object with a string `id`; every other field is checked where it is read) → catalog fields. */
  map(entry: JsonObject): Resolved;
  /** The config's `catalog_metadata.snapshot` is a copy of this list (one source at most). */
  snapshot?: true;
};

export const posInt = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : null);
export const strOrNull = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
/** Every price field, unknown. */
export const UNKNOWN_PRICES = Object.fromEntries(Object.keys(ModelPricing.shape).map((f) => [f, null])) as { [F in keyof NonNullable<CatalogEntry['pricing']>]: null };
/** A price per unit as a decimal string; "-1" (varies) and anything else unusable: unknown. */
export const price = (v: unknown) => (typeof v === 'string' && /^\d+(\.\d+)?(e-?\d+)?$/i.test(v) ? v : typeof v === 'number' && v >= 0 ? String(v) : null);
export const list = (v: unknown) => (Array.isArray(v) ? v.map(String) : null);
/** `v[key]` when v is a JSON object, else undefined (as reading a field of anything else gives). */
export const at = (v: JsonValue | undefined, key: string): JsonValue | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? v[key] : undefined);

/** An `architecture` object's modalities (the shape both public lists use). */
export function modalities(arch: JsonValue | undefined): Resolved {
  const input = list(at(arch, 'input_modalities'));
  const output = list(at(arch, 'output_modalities'));
  return {
    modality: strOrNull(at(arch, 'modality')),
    input_modalities: input,
    output_modalities: output,
    tokenizer: strOrNull(at(arch, 'tokenizer')),
    supports_vision: input ? input.includes('image') : null,
    supports_audio_input: input ? input.includes('audio') : null,
    supports_image_output: output ? output.includes('image') : null,
  };
}

/**
 * A `pricing` object of per-unit decimal strings. `internal_reasoning` and `web_search` of "0" mean
 * "not charged apart" (reasoning is billed as output; 0 is what is listed for models whose provider
 * charges for searches), so they are left unknown rather than taken as free.
 */
export function pricing(p: JsonValue | undefined): Resolved['pricing'] {
  if (!p || typeof p !== 'object') return null;
  const nonZero = (v: string | null) => (v !== null && Number(v) > 0 ? v : null);
  return {
    ...UNKNOWN_PRICES,
    prompt: price(at(p, 'prompt')),
    completion: price(at(p, 'completion')),
    image: price(at(p, 'image')),
    request: price(at(p, 'request')),
    input_cache_read: price(at(p, 'input_cache_read')),
    input_cache_write: price(at(p, 'input_cache_write')),
    internal_reasoning: nonZero(price(at(p, 'internal_reasoning'))),
    web_search: nonZero(price(at(p, 'web_search'))),
  };
}
