// One exchange with the first of a model's upstreams that answers, for the capabilities answered
// in one piece (embeddings and moderation whole; media, speech and transcription inside their own
// metering): failover and health
// recording, the time spent waiting on upstreams, and the warnings of the attempt that answered
// (a failed attempt's are not the answer's).
import type { AdapterCall } from '../../providers/adapter.ts';
import type { Capability } from '../../config/capabilities.ts';
import { withFailover, type FailoverOptions } from '../../routing/failover.ts';
import { route, type Target } from '../../routing/targets.ts';
import { UpstreamClock } from '../../routing/upstream-clock.ts';
import type { CapabilityDeps } from '../deps.ts';
import type { Caller } from '../descriptor.ts';
import { gatewayHeaders, upstreamLabel } from './gateway-headers.ts';
import { metered, type Metering, type Outcome } from '../../billing/metered.ts';

export type Exchanged<T, C extends Capability> = { value: T; target: Target<C>; warnings: string[]; upstreamMs: number };

export async function exchange<C extends Capability, T>(
  services: CapabilityDeps,
  model: string,
  targets: Target<C>[],
  run: (target: Target<C>, call: AdapterCall) => Promise<T>,
  log?: FailoverOptions['log'],
  /** The request (or job) the exchange serves: its attempts go to its trail. */
  requestId?: string,
): Promise<Exchanged<T, C>> {
  const clock = new UpstreamClock();
  const modelConfig = services.catalog.model(model);
  const candidates = modelConfig ? services.router.plan(modelConfig, targets) : targets;
  const { value, candidate, release } = await withFailover(
    candidates,
    async (t) => {
      const warnings: string[] = [];
      const call: AdapterCall = { provider: t.provider, upstreamModel: t.upstreamModel, warn: (m) => void warnings.push(m), waitOn: (step) => clock.wait(step) };
      return { answer: await run(t, call), warnings };
    },
    { model, health: services.health, metrics: services.metrics, onBackoff: clock.paused, log, router: services.router, trail: services.trails.get(requestId) },
  );
  // Answered in one piece: the key's concurrency slot is free again.
  release();
  return { value: value.answer, target: candidate, warnings: value.warnings, upstreamMs: clock.waitedMs };
}

/**
 * What a runner returns: the answer and its headers for the route (rate limits, upstream,
 * warnings), `upstreamMs` for X-Gateway-Overhead-Ms, and the warnings again for a job to store.
 */
export type RunResult<T> = { body: T; headers: Record<string, string>; upstreamMs: number; warnings: string[] };

/** A capability's runner, called alike by its route and by a job: the validated request in, the result out. */
export type Runner<B, T> = (services: CapabilityDeps, body: B, call: Caller) => Promise<RunResult<T>>;

/**
 * A whole single-exchange call: the model's candidates for `capability` (refused before anything
 * is reserved), metered around one exchange, the answer with the headers every endpoint sends.
 * `answer` turns what the adapter returned into the body and what the ledger records.
 */
export async function meteredExchange<C extends Capability, A, T>(
  services: CapabilityDeps,
  metering: Metering,
  capability: C,
  run: (target: Target<C>, call: AdapterCall) => Promise<A>,
  answer: (exchanged: Exchanged<A, C>) => { body: T; outcome: Outcome },
  log?: FailoverOptions['log'],
): Promise<RunResult<T>> {
  const { targets } = route(services.catalog, metering.model, capability);
  const r = await metered(services, metering, async () => {
    const exchanged = await exchange(services, metering.model, targets, run, log, metering.requestId);
    const { body, outcome } = answer(exchanged);
    return { value: { body, exchanged }, outcome };
  });
  const { body, exchanged } = r.value;
  return { body, headers: { ...r.headers, ...gatewayHeaders(upstreamLabel(exchanged.target), exchanged.warnings) }, upstreamMs: exchanged.upstreamMs, warnings: exchanged.warnings };
}
