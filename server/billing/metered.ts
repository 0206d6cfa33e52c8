// The one begin/settle wrapper around every billed call (text, embeddings, moderation, and the
// media capabilities and their jobs): reserve the most the call can cost before any upstream is
// asked, settle once to what it did, release the reservation when it failed before producing
// anything. Each capability sizes its reservation (pipeline/estimate.ts, config/billing-rules.ts)
// and reaches this through the request pipeline's admit stage (pipeline/pipeline.ts), jobs through their service.
import type { Principal } from '../auth/principal.ts';
import type { BilledEndpoint } from '../config/capabilities.ts';
import type { Reservation, UsageReport } from './hooks.ts';
import { GatewayError } from '../runtime/errors.ts';
import type { Catalog } from '../catalog/catalog.ts';
import type { Billing } from './hooks.ts';
import type { CostEstimate } from './prices.ts';

/** What metering reads: the model's billing rules and the quota to reserve from. */
export type MeteredDeps = { catalog: Pick<Catalog, 'model'>; billing: Billing };

export type Metering = {
  requestId: string;
  principal: Principal;
  /** The model id the client asked for (its multiplier and billing rule apply). */
  model: string;
  endpoint: BilledEndpoint;
  /** The most the call can cost, in tokens before the model's multiplier. */
  reserveTokens: number;
  /** A reservation that must outlive reservation_ttl_ms (a job's). */
  ttlMs?: number;
  /** What sizes the spend reservation (text: input and most output); else `reserveTokens` of the model's unit. */
  reserveCost?: CostEstimate;
};

/** What a call did, for the ledger: who answered and how much work it was. */
export type Outcome = Pick<UsageReport, 'provider' | 'upstreamModel' | 'usage' | 'metered' | 'estimated' | 'webSearch'>;

/** Nothing produced: the reservation is released and no tokens are billed. */
export const NOTHING: Outcome = { provider: null, upstreamModel: null, usage: null, estimated: false };

export type Meter = {
  /** Rate-limit headers for the response. */
  headers: Record<string, string>;
  reservation: Reservation;
  /** Once per call (later calls are ignored): bills `outcome`, recorded with the answer's status. */
  settle(outcome: Outcome, status?: number, errorCode?: string | null): Promise<void>;
  /** The call failed before producing anything: released, recorded with the error's status and code. */
  fail(err: unknown): Promise<void>;
};

export async function beginMetered(services: MeteredDeps, m: Metering): Promise<Meter> {
  const started = performance.now();
  const multiplier = services.catalog.model(m.model)?.token_multiplier ?? 1;
  const ticket = await services.billing.begin({ requestId: m.requestId, principal: m.principal, model: m.model, multiplier, reserveTokens: m.reserveTokens, reserveCost: m.reserveCost, ttlMs: m.ttlMs });
  const settle: Meter['settle'] = (outcome, status = 200, errorCode = null) =>
    ticket.settle({ ...outcome, requestId: m.requestId, model: m.model, endpoint: m.endpoint, status, errorCode, latencyMs: Math.round(performance.now() - started) });
  return { headers: ticket.headers, reservation: ticket.reservation, settle, fail: failingWith(settle) };
}

/** A meter's `fail` through its `settle`: nothing billed, recorded with the error's status and code. */
export const failingWith =
  (settle: Meter['settle']): Meter['fail'] =>
  (err) => {
    const gw = err instanceof GatewayError ? err : null;
    return settle(NOTHING, gw?.status ?? 500, gw?.code ?? 'internal_error');
  };
