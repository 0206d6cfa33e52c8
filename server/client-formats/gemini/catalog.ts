// The catalog in Gemini's shape (`GET /v1beta/models`), for Google's SDKs and Gemini CLI: the text
// models only, since they are what the Gemini-format methods serve. Unknown limits are left out
// rather than written as 0, as the catalog never claims a value it does not know.
import type { GeminiModel, GeminiModelList } from '../../../contract/gemini.ts';
import type { CatalogEntry } from '../../../contract/models.ts';
import { GeminiModelMethod } from '../../../contract/routes/gemini.ts';
import { TEXT_CAPABILITIES } from '../../providers/capabilities.ts';
import { errors } from '../../runtime/errors.ts';

/** `models/` as Google's clients may prefix an id, and the path parameter may still carry. */
export const withoutModelsPrefix = (id: string) => (id.startsWith('models/') ? id.slice('models/'.length) : id);

export function geminiModel(e: CatalogEntry): GeminiModel {
  return {
    name: `models/${e.id}`,
    baseModelId: e.id,
    version: '001',
    displayName: e.id,
    ...(e.description ? { description: e.description } : {}),
    ...(e.context_window !== null ? { inputTokenLimit: e.context_window } : {}),
    ...(e.max_output_tokens !== null ? { outputTokenLimit: e.max_output_tokens } : {}),
    supportedGenerationMethods: [...GeminiModelMethod.options],
    ...(e.supports_reasoning !== null ? { thinking: e.supports_reasoning } : {}),
  };
}

const MAX_PAGE = 1000;

/** A page of the text models in catalog order; `pageToken` is the index of the page's first model. */
export function geminiModelList(entries: readonly CatalogEntry[], query: { pageSize?: number; pageToken?: string }): GeminiModelList {
  const text = entries.filter((e) => TEXT_CAPABILITIES.has(e.endpoint));
  const size = Math.min(query.pageSize ?? 50, MAX_PAGE);
  const start = query.pageToken === undefined || query.pageToken === '' ? 0 : Number(query.pageToken);
  if (!Number.isInteger(start) || start < 0 || start > text.length) throw errors.invalid('Invalid pageToken: pass the nextPageToken of the previous page.', 'pageToken');
  const page = text.slice(start, start + size);
  const next = start + size < text.length ? { nextPageToken: String(start + size) } : {};
  return { models: page.map(geminiModel), ...next };
}

/** One text model, or 404. */
export function geminiModelById(entry: (id: string) => CatalogEntry | undefined, path: string): GeminiModel {
  const id = withoutModelsPrefix(path);
  const e = entry(id);
  if (!e || !TEXT_CAPABILITIES.has(e.endpoint)) throw errors.notFound(`The model 'models/${id}' is not a text model of this gateway: GET /v1beta/models lists them.`, 'model_not_found');
  return geminiModel(e);
}
