// The catalog in the shape of Anthropic's Models API (`GET /v1/models` and `/v1/models/{id}` with
// `anthropic-version`), for Anthropic's SDKs: the text models only, since they are what the
// Messages API serves, in catalog order, paged by model id as Anthropic pages.
import type { z } from 'zod';
import type { AnthropicModelInfo, AnthropicModelList, CatalogEntry, ModelListQuery } from '../../../contract/models.ts';
import { TEXT_CAPABILITIES } from '../../providers/capabilities.ts';
import { errors } from '../../runtime/errors.ts';

const DEFAULT_PAGE = 20;

export function anthropicModel(e: CatalogEntry): AnthropicModelInfo {
  return {
    type: 'model',
    id: e.id,
    display_name: e.id,
    created_at: new Date(e.created * 1000).toISOString().replace('.000Z', 'Z'),
    max_input_tokens: e.context_window,
    max_tokens: e.max_output_tokens,
    lifecycle: 'active',
    deprecated_at: null,
    retires_at: null,
    line: null,
    capabilities: null,
  };
}

const isText = (e: CatalogEntry) => TEXT_CAPABILITIES.has(e.endpoint);

/**
 * A page of the text models: `limit` of them (default 20) from the start, after `after_id`, or
 * just before `before_id`. `has_more` looks the way the page was asked for (before it with
 * `before_id`), as Anthropic's SDKs page on with `last_id` or `first_id`.
 */
export function anthropicModelList(entries: readonly CatalogEntry[], query: z.infer<typeof ModelListQuery>): AnthropicModelList {
  // Every model the gateway serves is active: a list of other stages alone is empty.
  const stages = [query.lifecycle, query['lifecycle[]']].flat().filter((v) => v !== undefined);
  if (stages.length && !stages.includes('active')) return { data: [], has_more: false, first_id: null, last_id: null };
  const text = entries.filter(isText);
  const limit = query.limit ?? DEFAULT_PAGE;
  if (query.after_id !== undefined && query.before_id !== undefined) throw errors.invalid('Send after_id or before_id, not both.', 'before_id');
  const at = (param: 'after_id' | 'before_id', id: string) => {
    const i = text.findIndex((e) => e.id === id);
    if (i < 0) throw errors.invalid(`${param} '${id}' is not a text model of this gateway: pass the first_id or last_id of a page.`, param);
    return i;
  };
  let start: number;
  let end: number;
  let hasMore: boolean;
  if (query.before_id !== undefined) {
    end = at('before_id', query.before_id);
    start = Math.max(0, end - limit);
    hasMore = start > 0;
  } else {
    start = query.after_id !== undefined ? at('after_id', query.after_id) + 1 : 0;
    end = Math.min(text.length, start + limit);
    hasMore = end < text.length;
  }
  const page = text.slice(start, end);
  return { data: page.map(anthropicModel), has_more: hasMore, first_id: page[0]?.id ?? null, last_id: page[page.length - 1]?.id ?? null };
}

/** One text model, or 404 `model_not_found`. */
export function anthropicModelById(entry: (id: string) => CatalogEntry | undefined, suggest: (id: string) => string | undefined, id: string): AnthropicModelInfo {
  const e = entry(id);
  if (!e) throw errors.modelNotFound(id, suggest(id), 404);
  if (!isText(e)) throw errors.notFound(`The model '${id}' is not a text model, which is all Anthropic's Models API lists: GET /v1/models without anthropic-version lists every model.`, 'model_not_found', 'model');
  return anthropicModel(e);
}
