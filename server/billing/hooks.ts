import type { Principal } from '../auth/principal.ts';
import type * as C from '../translate/canonical.ts';
import type { MeteredUnit } from '../config/billing-rules.ts';
import type { BilledEndpoint } from '../config/capabilities.ts';
import type { CostEstimate } from './prices.ts';

/** What a finished (or failed) request reports for billing and the usage ledger. */
export type UsageReport = {
  requestId: string;
  model: string;
  endpoint: BilledEndpoint;
  provider: string | null;
  upstreamModel: string | null;
  /** Token usage the upstream reported (or the gateway estimated); wins over `metered` when both are set. */
  usage: C.Usage | null;
  /** Non-token work done (images made, seconds of video, characters spoken, minutes transcribed). */
  metered?: { unit: MeteredUnit; quantity: number } | null;
  /** True when the upstream never reported usage and the numbers are the gateway's estimate. */
  estimated: boolean;
  status: number;
  errorCode: string | null;
  latencyMs: number;
  /** The request used web search: the configured surcharge is added (Responses). */
  webSearch?: boolean;
};

/**
 * A quota reservation as data: stored with an async job, so that whichever instance ends the job
 * settles it (Billing.resume), exactly once.
 */
export type Reservation = {
  requestId: string;
  keyId: string;
  userId: string;
  appId: string | null;
  model: string;
  multiplier: number;
  /** Counter key and reservation id in the counter store; the quota day's end (epoch ms). */
  key: string;
  /**
   * The user's own quota counter, holding the same reservation (same id and amount) when the plan
   * limits the user's day (`user_daily_tokens`); null or absent otherwise (and in reservations
   * stored before per-user limits existed).
   */
  userKey?: string | null;
  id: string;
  dayEnd: number;
  /** Tokens reserved, after the multiplier. */
  amount: number;
  /**
   * The spend budgets it holds (docs/billing.md "Budgets"): each counter (same reservation id),
   * whose it is, its period and when it ends, and its limit in nano-dollars. `costAmount` is what
   * each holds: the most the request can cost, in nano-dollars (for a request with input nothing
   * bounds, the most its bounded part can cost: it may hold more, up to the whole budget). Absent:
   * no budget applies (and in reservations stored before budgets existed).
   */
  budgets?: BudgetHold[];
  costAmount?: number;
  /**
   * When it was made (epoch ms): the time of its ledger record, so that every instance that
   * settles it writes the same row (the ledger is unique by request id and time), and the record
   * falls on the day whose quota it counted against. Absent in reservations stored before: the
   * start of that quota day.
   */
  at?: number;
};

/** One spend budget a reservation is held against. */
export type BudgetHold = { key: string; scope: 'key' | 'user'; period: 'daily' | 'monthly'; periodStart: string; until: number; limit: number };

/** Told of every settled spend under a budget (budget-alerts.ts posts the thresholds it crossed). */
export interface BudgetObserver {
  observe(c: {
    scope: 'key' | 'user';
    userId: string;
    keyId: string | null;
    period: 'daily' | 'monthly';
    /** YYYY-MM-DD (daily) or YYYY-MM (monthly), UTC. */
    periodStart: string;
    limitNano: number;
    beforeNano: number;
    afterNano: number;
    at: number;
  }): void;
}

export type BillingTicket = {
  /** Rate-limit headers for the response. */
  headers: Record<string, string>;
  reservation: Reservation;
  /** Exactly once per request; later calls are ignored. */
  settle(report: UsageReport): Promise<void>;
};

/**
 * The billing seam of the request path: `begin` runs before any upstream call (the quota
 * reservation goes here), the ticket's `settle` exactly once after it (stream or not, client
 * gone or not). Each capability sizes its own reservation: the most the request can cost, in
 * tokens before the model's multiplier (config/billing-rules.ts converts non-token units).
 */
export interface Billing {
  begin(ctx: {
    requestId: string;
    principal: Principal;
    model: string;
    multiplier: number;
    reserveTokens: number;
    /** What sizes the spend reservation under a budget (text: input and most output); else `reserveTokens` in the model's unit. */
    reserveCost?: CostEstimate;
    /** How long the reservation holds without a settlement (default reservation_ttl_ms): a job's runs longer. */
    ttlMs?: number;
  }): Promise<BillingTicket>;
  /** A ticket for a reservation made elsewhere (another instance, before a restart); settles only while it is held. */
  resume(reservation: Reservation): BillingTicket;
  /**
   * A request that bills nothing (token counting): the model's plan gate and the requests-per-minute
   * windows, checked and counted like any request's; no quota held, nothing in the ledger. Returns
   * the requests' rate-limit headers.
   */
  admit(ctx: { principal: Principal; model: string }): Promise<Record<string, string>>;
}
