// Token counting (Messages' count_tokens, Responses' input_tokens): the input tokens a request would use, without generating.
// The model's first upstream is asked where it counts itself — with the request as a generation
// would send it there (passed through, or translated) — since that is the upstream a generation
// tries first; otherwise, or when it cannot answer, the gateway counts with its own tokenizer and
// says so. Admitted like any request (plan gate, requests per minute); billed and recorded nowhere.
import { missingCredential } from '../../providers/credentials.ts';
import type { TextTarget } from '../../pipeline/types.ts';
import { postJson } from '../../upstream/http.ts';
import { upstreamFailure } from '../../upstream/errors.ts';
import { LOCAL_TOKENIZER, countInputTokens } from '../../translate/token-count.ts';
import { headerSafe } from '../shared/gateway-headers.ts';
import type { CallInfo, StreamedAnswer } from '../descriptor.ts';
import type { CapabilityDeps } from '../deps.ts';
import { isNative, upstreamRequest, type TextCall } from './engine.ts';
import type { ClientFormat } from './formats.ts';
import { inlineImages } from './inline-images.ts';

/** `X-Gateway-Token-Count`: where the figure comes from. */
export type CountSource = 'upstream' | 'estimate';

type Counted = { tokens: number; source: CountSource; provider: string | null; warning: string | null };

/** The count in the client format's answer, with who counted it. */
export async function countTokens<Body>(format: ClientFormat<Body>, deps: CapabilityDeps, body: Body, info: CallInfo): Promise<StreamedAnswer & { headers: Record<string, string> }> {
  if (!format.tokenCount) throw new Error(`the ${format.endpoint} format has no token-count answer`);
  const decoded = await format.decode(body, { headers: info.headers, items: deps.items });
  const call: TextCall = { principal: info.principal, requestId: info.requestId, log: info.log, format, ...decoded };
  const modelId = call.request.model;
  const planned = deps.pipeline.targets(modelId, format.endpoint);
  let targets = planned.targets;
  if (call.nativeOnly) {
    targets = targets.filter((t) => isNative(call, t));
    if (!targets.length) throw call.nativeOnly;
  }
  const rateHeaders = await deps.pipeline.admitUnmetered({ principal: call.principal, model: modelId });
  // The plan's first choice (its key, when the provider has a pool): counting sends no generation.
  const first = deps.pipeline.plan(planned.model, targets.slice(0, 1), { requestId: call.requestId, capability: format.endpoint })[0]!;
  const counted = await countAt(deps, call, first);
  const headers: Record<string, string> = { ...rateHeaders, 'x-gateway-token-count': counted.source };
  if (counted.provider) headers['x-gateway-upstream'] = counted.provider;
  if (counted.warning) headers['x-gateway-warnings'] = headerSafe(counted.warning);
  return { status: 200, body: format.tokenCount(counted.tokens), headers };
}

async function countAt(deps: CapabilityDeps, call: TextCall, target: TextTarget): Promise<Counted> {
  const provider = target.provider.id;
  const counter = target.adapter.counter;
  const local = async (warning: string | null): Promise<Counted> => ({ tokens: await countInputTokens(call.request), source: 'estimate', provider: null, warning });
  if (!counter) return local(null);
  const missing = missingCredential(target.provider);
  if (missing) return local(`provider '${provider}' ${missing}: counted by the gateway (${LOCAL_TOKENIZER})`);
  const routed = { ...call.request, model: target.upstreamModel };
  const prepared = target.adapter.needsInlineImages ? await inlineImages(routed, deps) : routed;
  const { ctx, http, native } = upstreamRequest(call, target, deps, prepared);
  try {
    const { json } = await postJson(counter.call(prepared, ctx, { http, native }));
    const tokens = counter.read(json);
    if (tokens === null) return local(`provider '${provider}' answered the count without a token count: counted by the gateway (${LOCAL_TOKENIZER})`);
    return { tokens, source: 'upstream', provider, warning: null };
  } catch (err) {
    const failure = upstreamFailure(err, provider);
    if (!failure) throw err;
    call.log?.warn({ provider, upstream_model: target.upstreamModel, status: failure.status || undefined, failure: failure.code }, `token count failed upstream: ${failure.message}`);
    return local(`the token count at provider '${provider}' failed (${failure.code}): counted by the gateway (${LOCAL_TOKENIZER})`);
  }
}
