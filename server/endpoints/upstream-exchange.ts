// One exchange with the first of a model's upstreams that answers, for the capabilities answered
// in one piece (embeddings, moderation, and the media ones to come): failover and health
// recording, the time spent waiting on upstreams, and the warnings of the attempt that answered
// (a failed attempt's are not the answer's).
import type { AdapterCall } from '../providers/adapter.ts';
import type { Capability } from '../providers/registry.ts';
import { withFailover, type FailoverOptions } from '../routing/failover.ts';
import type { Target } from '../routing/targets.ts';
import { UpstreamClock } from '../routing/upstream-clock.ts';
import type { Services } from '../services.ts';

export type Exchanged<T, C extends Capability> = { value: T; target: Target<C>; warnings: string[]; upstreamMs: number };

export async function exchange<C extends Capability, T>(
  services: Services,
  model: string,
  targets: Target<C>[],
  run: (target: Target<C>, call: AdapterCall) => Promise<T>,
  log?: FailoverOptions['log'],
): Promise<Exchanged<T, C>> {
  const clock = new UpstreamClock();
  const { value, candidate } = await withFailover(
    targets,
    async (t) => {
      const warnings: string[] = [];
      const call: AdapterCall = { provider: t.provider, upstreamModel: t.upstreamModel, warn: (m) => void warnings.push(m), waitOn: (step) => clock.wait(step) };
      return { answer: await run(t, call), warnings };
    },
    { model, health: services.health, metrics: services.metrics, onBackoff: clock.paused, log },
  );
  return { value: value.answer, target: candidate, warnings: value.warnings, upstreamMs: clock.waitedMs };
}

/**
 * What a runner returns: the answer and its headers for the route (rate limits, upstream,
 * warnings), `upstreamMs` for X-Gateway-Overhead-Ms, and the warnings again for a job to store.
 */
export type RunResult<T> = { body: T; headers: Record<string, string>; upstreamMs: number; warnings: string[] };
