// A translated request fitted to what the catalog knows of the model, each change named for
// X-Gateway-Warnings. Passed-through requests reach their upstream as the client wrote them.
import type { CatalogEntry } from '../../../contract/models.ts';
import type * as C from '../../translate/canonical.ts';
import { unknownFieldsWarning } from '../../translate/request-fields.ts';

export type Fitted = { request: C.Request; warnings: string[] };

export function fitToModel(req: C.Request, entry: CatalogEntry | undefined): Fitted {
  const warnings: string[] = [];
  let request = req;
  // Adaptive thinking lets the model decide; a model that cannot reason would refuse the controls.
  if (req.reasoning?.adaptive && entry?.supports_reasoning !== true) {
    request = { ...request, reasoning: undefined };
    const why = entry?.supports_reasoning === false ? 'does not support reasoning' : 'is not known to support reasoning (set supports_reasoning in its config)';
    warnings.push(`thinking and effort not sent: the model ${why}`);
  }
  const max = entry?.max_output_tokens;
  if (max && req.maxTokens !== undefined && req.maxTokens > max) {
    request = { ...request, maxTokens: max };
    warnings.push(`max_tokens lowered from ${req.maxTokens} to ${max}, the model's maximum output`);
  }
  if (req.untranslated?.length) warnings.push(`not supported by this model's provider, dropped: ${req.untranslated.join(', ')}`);
  if (req.unknownFields?.length) warnings.push(unknownFieldsWarning(req.unknownFields));
  return { request, warnings };
}
