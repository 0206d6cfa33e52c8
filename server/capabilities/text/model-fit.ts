// A translated request fitted to what the catalog knows of the model, each change named for
// X-Gateway-Warnings. Passed-through requests reach their upstream as the client wrote them.
import type { CatalogEntry } from '../../../contract/models.ts';
import type { TextAdapter } from '../../providers/types.ts';
import type * as C from '../../translate/canonical.ts';
import { hasCacheControl } from '../../translate/cache-hints.ts';
import { unknownFieldsWarning } from '../../translate/request-fields.ts';

/**
 * `warnings(adapter)`: what translating for an upstream of that wire format changed or dropped.
 * Most of it is the same for every upstream; cache breakpoints reach the wires that take them
 * (`cacheBreakpoints`) and are dropped (and named) for the others.
 */
export type Fitted = { request: C.Request; warnings(adapter: Pick<TextAdapter, 'cacheBreakpoints'>): string[] };

export function fitToModel(req: C.Request, entry: CatalogEntry | undefined): Fitted {
  const changed: string[] = [];
  let request = req;
  // Adaptive thinking lets the model decide; a model that cannot reason would refuse the controls.
  if (req.reasoning?.adaptive && entry?.supports_reasoning !== true) {
    request = { ...request, reasoning: undefined };
    const why = entry?.supports_reasoning === false ? 'does not support reasoning' : 'is not known to support reasoning (set supports_reasoning in its config)';
    changed.push(`thinking and effort not sent: the model ${why}`);
  }
  const max = entry?.max_output_tokens;
  if (max && req.maxTokens !== undefined && req.maxTokens > max) {
    request = { ...request, maxTokens: max };
    changed.push(`max_tokens lowered from ${req.maxTokens} to ${max}, the model's maximum output`);
  }
  const cacheHints = hasCacheControl(req);
  return {
    request,
    warnings(adapter) {
      const dropped = [...(req.untranslated ?? []), ...(cacheHints && !adapter.cacheBreakpoints ? ['cache_control'] : [])];
      const out = [...changed];
      if (dropped.length) out.push(`not supported by this model's provider, dropped: ${dropped.join(', ')}`);
      if (req.unknownFields?.length) out.push(unknownFieldsWarning(req.unknownFields));
      return out;
    },
  };
}
