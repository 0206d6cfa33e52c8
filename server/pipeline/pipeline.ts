// The request pipeline (docs/architecture.md "The request pipeline"): the one way a capability
// reaches the layers below it. A capability describes its work — what it decodes, what one
// upstream attempt does, what it answers — and asks the pipeline for each stage: `opened` …
// `answered` | `failed` (the request, run by the HTTP binding around the capability), `admit` (the
// hold; its `settle`), `plan` (the candidates), `attempt` (failover). The
// stages run the domain's services (billing, the router, health, the request's trail) and call the
// hooks of the concerns assembled in concerns.ts. No capability imports billing/ or routing/:
// `npm run check` enforces it.
import type { Billing } from '../billing/hooks.ts';
import { beginMetered, failingWith, type Meter, type Metering, type Outcome } from '../billing/metered.ts';
import type { Catalog } from '../catalog/catalog.ts';
import type { Capability } from '../config/capabilities.ts';
import type { ProviderConfig, ResolvedConfig } from '../config/schema.ts';
import type { RequestTrails } from '../observe/request-trail.ts';
import { withFailover, type Blame, type FailoverOptions, type Release } from '../routing/failover.ts';
import type { HealthRecorder } from '../routing/health.ts';
import { keysOf, labelOf } from '../routing/key-pool.ts';
import type { Routed, Router } from '../routing/router.ts';
import { knownModel, route, type Target } from '../routing/targets.ts';
import type { Metrics } from '../runtime/metrics.ts';
import type * as C from '../translate/canonical.ts';
import { affinityKey } from './affinity.ts';
import type { Concern, RequestFacts, Stage, StageHook, StageTypes } from './concern.ts';

/** What the pipeline's stages run with: handed in by the composition root (main.ts). */
export type PipelineDeps = {
  config: ResolvedConfig;
  catalog: Catalog;
  /** Strategies, key pools, breakers and cool-downs: which upstream and key each attempt goes to. */
  router: Router;
  billing: Billing;
  health: HealthRecorder;
  metrics: Metrics;
  /** Each request's trail (attempts, phases): the request log's record and the tracer's spans. */
  trails: RequestTrails;
};

export type ModelConfig = ResolvedConfig['models'][number];

/** Where a failed attempt's raw cause is logged (warn). */
export type AttemptLog = NonNullable<FailoverOptions['log']>;

/** How a call's attempts are made: whose they are, and what they are told. */
export type AttemptOptions = {
  model: string;
  /** The request (or job) the attempts serve: its trail records them; key-limit holds are named by it. */
  requestId?: string;
  log?: AttemptLog;
  /** Told each backoff pause (upstream time, not the gateway's own). */
  onBackoff?: (ms: number) => void;
  /** The call's estimated tokens (a key's tokens per minute). */
  tokens?: number;
  /** A streamed answer (the record says so). */
  stream?: boolean;
};

/** The attempt that answered: its value, the candidate, how to blame it later, and how to end its key's hold. */
export type Won<T, Cand> = { value: T; candidate: Cand; blame: Blame; release: Release };

type Hooks = { [S in Stage]: StageHook<S>[] };

function hooksOf(concerns: readonly Concern[]): Hooks {
  const pick = <S extends Stage>(stage: S) => concerns.flatMap((c) => (c[stage] ? [c[stage] as StageHook<S>] : []));
  return { request: pick('request'), admit: pick('admit'), plan: pick('plan'), attempt: pick('attempt'), settle: pick('settle') };
}

const idOf = (body: unknown) => (body && typeof body === 'object' && typeof (body as { id?: unknown }).id === 'string' ? (body as { id: string }).id : null);

export class RequestPipeline {
  private readonly hooks: Hooks;

  constructor(
    private readonly deps: PipelineDeps,
    concerns: readonly Concern[],
  ) {
    this.hooks = hooksOf(concerns);
  }

  private start<S extends Stage>(stage: S, facts: StageTypes[S]['start']) {
    for (const h of this.hooks[stage] as StageHook<S>[]) h.start?.(facts);
  }

  private close<S extends Stage>(stage: S, facts: StageTypes[S]['start'], end: StageTypes[S]['end']) {
    for (const h of this.hooks[stage] as StageHook<S>[]) h.close?.(facts, end);
  }

  /**
   * request: the call begins; its end is `answered` or `failed`, once. The caller (the HTTP binding)
   * runs the capability between them in its own frame: no promise of the pipeline's per request.
   * `facts.headers` is what every answer carries, an error's too.
   */
  opened(facts: RequestFacts): void {
    this.start('request', facts);
  }

  answered(facts: RequestFacts, answer: { status: number; body: unknown }): void {
    // A job started: its id is the record's (a 202's body is the job).
    this.close('request', facts, { status: answer.status, jobId: answer.status === 202 ? idOf(answer.body) : null, error: null });
  }

  failed(facts: RequestFacts, error: unknown): void {
    this.close('request', facts, { status: null, jobId: null, error });
  }

  /** The model the client named: model_not_found, with the close id the catalog suggests, when it serves none. */
  model(id: string): ModelConfig {
    return knownModel(this.deps.catalog, id);
  }

  /** The model and its upstreams able to serve `capability`, in the configured order: refused (model_not_found, model_not_supported) before anything is reserved. */
  targets<Cap extends Capability>(modelId: string, capability: Cap): { model: ModelConfig; targets: Target<Cap>[] } {
    return route(this.deps.catalog, modelId, capability);
  }

  /**
   * plan: the order the targets are tried in, each with its key (strategy, pools, breakers and
   * cool-downs). `affinity`: a text request, whose prompt prefix keeps a conversation on one upstream.
   */
  plan<T extends Target>(model: ModelConfig, targets: readonly T[], o: { requestId?: string; capability: Capability; affinity?: C.Request }): Routed<T>[] {
    const facts = this.hooks.plan.length ? { requestId: o.requestId ?? null, model: model.id, capability: o.capability } : null;
    if (facts) this.start('plan', facts);
    const request = o.affinity;
    const planned = this.deps.router.plan(model, targets, request ? { affinity: () => affinityKey(request, this.deps.config.routing.affinity_min_tokens) } : {});
    if (facts) this.close('plan', facts, { candidates: planned.map(labelOf) });
    return planned;
  }

  /** admit: the hold the call is admitted under (limits, budgets); its `settle` (once) is the settle stage. */
  async admit(m: Metering): Promise<Meter> {
    if (!this.hooks.admit.length && !this.hooks.settle.length) return beginMetered(this.deps, m);
    this.start('admit', m);
    let meter: Meter;
    try {
      meter = await beginMetered(this.deps, m);
    } catch (error) {
      this.close('admit', m, { error });
      throw error;
    }
    this.close('admit', m, { headers: meter.headers });
    if (!this.hooks.settle.length) return meter;
    const settle: Meter['settle'] = (outcome, status = 200, errorCode = null) => {
      const facts = { metering: m, outcome, status, errorCode };
      this.start('settle', facts);
      return meter.settle(outcome, status, errorCode).then(
        () => this.close('settle', facts, { error: null }),
        (error: unknown) => {
          this.close('settle', facts, { error });
          throw error;
        },
      );
    };
    return { ...meter, settle, fail: failingWith(settle) };
  }

  /** admit, run, settle: a call answered in one piece, settled before its answer leaves; nothing billed when `run` fails. */
  async metered<T>(m: Metering, run: () => Promise<{ value: T; outcome: Outcome }>): Promise<{ value: T; headers: Record<string, string> }> {
    const meter = await this.admit(m);
    let result: { value: T; outcome: Outcome };
    try {
      result = await run();
    } catch (err) {
      await meter.fail(err);
      throw err;
    }
    await meter.settle(result.outcome);
    return { value: result.value, headers: meter.headers };
  }

  /** admit without a hold: the plan gate and the request rate (a token count generates nothing). Its rate-limit headers. */
  admitUnmetered(ctx: Parameters<Billing['admit']>[0]): Promise<Record<string, string>> {
    return this.deps.billing.admit(ctx);
  }

  /** attempt: the candidates tried in order until one answers (failover, health, key holds, the trail's attempts). */
  attempt<T, Cand extends Target>(candidates: Cand[], run: (candidate: Cand) => Promise<T>, o: AttemptOptions): Promise<Won<T, Cand>> {
    const trail = this.deps.trails.get(o.requestId);
    if (trail && o.stream !== undefined) trail.stream = o.stream;
    const opts: FailoverOptions = {
      model: o.model,
      health: this.deps.health,
      metrics: this.deps.metrics,
      onBackoff: o.onBackoff,
      log: o.log,
      router: this.deps.router,
      requestId: o.requestId,
      tokens: o.tokens,
      trail,
    };
    return withFailover(candidates, this.hooks.attempt.length ? this.watched(run, o) : run, opts);
  }

  private watched<T, Cand extends Target>(run: (candidate: Cand) => Promise<T>, o: AttemptOptions) {
    return async (candidate: Cand): Promise<T> => {
      const facts = { requestId: o.requestId ?? null, model: o.model, provider: candidate.provider.id, upstreamModel: candidate.upstreamModel };
      this.start('attempt', facts);
      try {
        const value = await run(candidate);
        this.close('attempt', facts, { error: null });
        return value;
      } catch (error) {
        this.close('attempt', facts, { error });
        throw error;
      }
    };
  }

  /** What X-Gateway-Upstream names: the provider id, and for a provider with a key pool the key's alias or index after `#`. */
  label(target: { provider: { id: string } }): string {
    return labelOf(target);
  }

  /** The key of a provider's pool, by its index: a video's operation is checked with the key that started it. */
  keyIndexOf(target: { provider: { id: string } }): number {
    return (target as { key?: { index: number } }).key?.index ?? 0;
  }

  /** The provider as configured with its `index`th key; undefined when the provider is gone, null when that key is. */
  providerWithKey(providerId: string, index: number): ProviderConfig | null | undefined {
    const configured = this.deps.catalog.providers.get(providerId);
    if (!configured) return undefined;
    return keysOf(configured).find((k) => k.index === index)?.provider ?? null;
  }
}
