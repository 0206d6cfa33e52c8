// The request pipeline's stages and what a cross-cutting concern hooks into them (docs/architecture.md
// "The request pipeline"). Every capability route runs through the same stages:
//
//   request  the whole call: who, which route and capability, which model; its answer or error
//   admit    limits and budgets: the hold the call is admitted under (billing)
//   plan     routing: the model's candidates in the order they are tried (strategy, pools, breakers)
//   attempt  one upstream attempt, as failover makes it
//   settle   the ledger: what the call did, once
//
// A concern is a module that exports one `Concern` (a hook `{start, close}` on the stages it cares
// about), added with one line in concerns.ts. Hooks are called synchronously, in the order concerns
// are listed, and must be cheap and must not throw: they observe, and where a stage says so, add
// (headers to the answer). Authentication and decoding run before the pipeline (the HTTP layer's
// hooks, the route's contract); recording (the request log, traces) reads the request's trail.
import type { Principal } from '../auth/principal.ts';
import type { Capability } from '../config/capabilities.ts';
import type { Metering, Outcome } from '../billing/metered.ts';

/** The client format a route speaks, as the request log and traces name it (a text format's `label`). */
export type FormatLabel = string;

/** A capability call as the request stage sees it. */
export type RequestFacts = {
  requestId: string;
  principal: Principal;
  /** The contract route that matched (`chatCompletions`, `speech`, …). */
  route: string;
  /** The row of the capability table it is billed and measured under. */
  capability: Capability;
  format: FormatLabel;
  /** The model the request names, when it names one of a model id's shape. */
  model: string | null;
  /**
   * Headers every answer of this call carries, whatever it ends with (an answer or an error):
   * a concern adds to them; the HTTP layer sends them.
   */
  headers: Record<string, string>;
};

/** How a call ended: the answer's status (and the job it started, for a 202), or the error thrown. */
export type RequestEnd = { status: number; jobId: string | null; error: null } | { status: null; jobId: null; error: unknown };

/** The candidates a plan produced, by the label X-Gateway-Upstream would give each. */
export type PlanFacts = { requestId: string | null; model: string; capability: Capability };

export type AttemptFacts = { requestId: string | null; model: string; provider: string; upstreamModel: string };
/** An attempt's end: null when it answered, else what it failed with. */
export type AttemptEnd = { error: unknown };

export type SettleFacts = { metering: Metering; outcome: Outcome; status: number; errorCode: string | null };

/** What each stage's hooks are given when it starts and when it ends. */
export type StageTypes = {
  request: { start: RequestFacts; end: RequestEnd };
  admit: { start: Metering; end: { headers: Record<string, string> } | { error: unknown } };
  plan: { start: PlanFacts; end: { candidates: readonly string[] } };
  attempt: { start: AttemptFacts; end: AttemptEnd };
  settle: { start: SettleFacts; end: { error: unknown } };
};

export type Stage = keyof StageTypes;

export type StageHook<S extends Stage> = {
  start?(facts: StageTypes[S]['start']): void;
  close?(facts: StageTypes[S]['start'], end: StageTypes[S]['end']): void;
};

/** A cross-cutting concern: a name (for logs and tests) and its hooks, stage by stage. */
export type Concern = { name: string } & { [S in Stage]?: StageHook<S> };
