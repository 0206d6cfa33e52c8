// Poe's public model list (`GET /v1/models`, OpenAI-style; `created` in milliseconds): looked up
// for a model OpenRouter's list does not hold.
import type { JsonObject } from '../../upstream/json.ts';
import { at, modalities, posInt, pricing, strOrNull, type CatalogSource, type Resolved } from '../catalog-source.ts';

/** One entry of the list → catalog fields. */
export function mapPoe(m: JsonObject): Resolved {
  return {
    context_window: posInt(at(m.context_window, 'context_length') ?? m.context_length),
    max_output_tokens: posInt(at(m.context_window, 'max_output_tokens') ?? m.max_output_tokens),
    ...modalities(m.architecture),
    description: strOrNull(m.description),
    pricing: pricing(m.pricing),
  };
}

export const poeCatalog: CatalogSource = { id: 'poe', map: mapPoe };
