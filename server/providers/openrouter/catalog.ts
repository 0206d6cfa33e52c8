// OpenRouter's public model list (`GET /api/v1/models`): the first place the catalog looks for a
// model's context window, modalities, parameters and prices. test/fixtures/recorded/roo-code holds
// a recorded copy.
import type { JsonObject } from '../../upstream/json.ts';
import { at, list, modalities, posInt, pricing, strOrNull, type CatalogSource, type Resolved } from '../catalog-source.ts';

/** One entry of the list → catalog fields. */
export function mapOpenRouter(m: JsonObject): Resolved {
  const sp = list(m.supported_parameters);
  const has = (...names: string[]) => (sp ? names.some((n) => sp.includes(n)) : null);
  const tools = has('tools', 'tool_choice');
  return {
    // The model's own context length, not top_provider's (which is one provider's limit).
    context_window: posInt(m.context_length),
    max_output_tokens: posInt(at(m.top_provider, 'max_completion_tokens')),
    ...modalities(m.architecture),
    supports_tools: tools,
    supports_function_calling: tools,
    supports_reasoning: has('reasoning', 'include_reasoning'),
    supports_json_mode: has('response_format', 'structured_outputs'),
    description: strOrNull(m.description),
    pricing: pricing(m.pricing),
  };
}

export const openRouterCatalog: CatalogSource = { id: 'openrouter', map: mapOpenRouter, snapshot: true };
