// One exchange with the first of a model's upstreams that answers, for the capabilities answered
// in one piece (embeddings and moderation whole; media, speech and transcription inside their own
// hold): planned and attempted through the pipeline, the time spent waiting on upstreams, and the
// warnings of the attempt that answered (a failed attempt's are not the answer's).
import type { AdapterCall } from '../providers/adapter.ts';
import type { Capability } from '../config/capabilities.ts';
import type { Target } from '../routing/targets.ts';
import type { AttemptLog, RequestPipeline } from './pipeline.ts';
import { UpstreamClock } from './upstream-clock.ts';

export type Exchanged<T, Cand> = {
  value: T;
  target: Cand;
  /** What X-Gateway-Upstream names for the target that answered. */
  upstream: string;
  warnings: string[];
  upstreamMs: number;
};

export async function exchange<C extends Capability, Cand extends Target<C>, T>(
  pipeline: RequestPipeline,
  model: string,
  targets: Cand[],
  run: (target: Cand, call: AdapterCall) => Promise<T>,
  o: { log?: AttemptLog; requestId?: string; capability: C },
): Promise<Exchanged<T, Cand>> {
  const clock = new UpstreamClock();
  const candidates = pipeline.plan(pipeline.model(model), targets, { requestId: o.requestId, capability: o.capability });
  const { value, candidate, release } = await pipeline.attempt(
    candidates,
    async (t) => {
      const warnings: string[] = [];
      const call: AdapterCall = { provider: t.provider, upstreamModel: t.upstreamModel, warn: (m) => void warnings.push(m), waitOn: (step) => clock.wait(step) };
      return { answer: await run(t, call), warnings };
    },
    { model, onBackoff: clock.paused, log: o.log, requestId: o.requestId },
  );
  // Answered in one piece: the key's concurrency slot is free again.
  release();
  return { value: value.answer, target: candidate, upstream: pipeline.label(candidate), warnings: value.warnings, upstreamMs: clock.waitedMs };
}
