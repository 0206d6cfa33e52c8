// A capability answered in one piece (embeddings, moderation): admitted, planned and attempted
// through the request pipeline (pipeline/exchange.ts), settled before the answer leaves, with the
// headers every upstream-backed endpoint sends.
import type { AdapterCall } from '../../providers/adapter.ts';
import type { Capability } from '../../config/capabilities.ts';
import { exchange, type Exchanged } from '../../pipeline/exchange.ts';
import type { AttemptLog } from '../../pipeline/pipeline.ts';
import type { Metering, Outcome, Target } from '../../pipeline/types.ts';
import type { CapabilityDeps } from '../deps.ts';
import type { Caller } from '../descriptor.ts';
import { gatewayHeaders } from './gateway-headers.ts';

/**
 * What a runner returns: the answer and its headers for the route (rate limits, upstream,
 * warnings), `upstreamMs` for X-Gateway-Overhead-Ms, and the warnings again for a job to store.
 */
export type RunResult<T> = { body: T; headers: Record<string, string>; upstreamMs: number; warnings: string[] };

/** A capability's runner, called alike by its route and by a job: the validated request in, the result out. */
export type Runner<B, T> = (services: CapabilityDeps, body: B, call: Caller) => Promise<RunResult<T>>;

/**
 * A whole single-exchange call: the model's candidates for `capability` (refused before anything
 * is reserved), admitted around one exchange, the answer with the headers every endpoint sends.
 * `answer` turns what the adapter returned into the body and what the ledger records.
 */
export async function meteredExchange<C extends Capability, A, T>(
  services: CapabilityDeps,
  metering: Metering,
  capability: C,
  run: (target: Target<C>, call: AdapterCall) => Promise<A>,
  answer: (exchanged: Exchanged<A, Target<C>>) => { body: T; outcome: Outcome },
  log?: AttemptLog,
): Promise<RunResult<T>> {
  const { pipeline } = services;
  const { targets } = pipeline.targets(metering.model, capability);
  const r = await pipeline.metered(metering, async () => {
    const exchanged = await exchange(pipeline, metering.model, targets, run, { log, requestId: metering.requestId, capability });
    const { body, outcome } = answer(exchanged);
    return { value: { body, exchanged }, outcome };
  });
  const { body, exchanged } = r.value;
  return { body, headers: { ...r.headers, ...gatewayHeaders(exchanged.upstream, exchanged.warnings) }, upstreamMs: exchanged.upstreamMs, warnings: exchanged.warnings };
}
