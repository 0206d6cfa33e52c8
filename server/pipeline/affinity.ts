// A text request's cache affinity key (docs/routing.md "Cache affinity"): what makes two requests
// share a provider's prompt cache. Providers cache a prompt's prefix per account, and only from a
// minimum length (1,024 tokens at OpenAI and Anthropic), so the key is the prefix every turn of one
// conversation repeats (system prompt, tools, first message) once it is long enough to be cached,
// or the client's own hint (`prompt_cache_key`, else the end-user id it sends) whatever the length.
import { createHash } from 'node:crypto';
import { estimatePromptTokens } from './estimate.ts';
import type * as C from '../translate/canonical.ts';

export function affinityKey(req: C.Request, minTokens: number): string | null {
  if (req.affinityHint) return req.affinityHint;
  const first = req.messages[0];
  const prefix: C.Request = { ...req, messages: first ? [first] : [] };
  if (estimatePromptTokens(prefix) < minTokens) return null;
  const h = createHash('sha256');
  h.update(JSON.stringify(req.system));
  h.update('\u0000');
  h.update(JSON.stringify(req.tools ?? []));
  h.update('\u0000');
  h.update(JSON.stringify(first ?? null));
  return `prefix:${h.digest('base64url').slice(0, 22)}`;
}
