import type { Principal } from '../auth/principal.ts';
import type * as C from '../translate/canonical.ts';

/** What a finished (or failed) request reports for billing and the usage ledger. */
export type UsageReport = {
  requestId: string;
  principal: Principal;
  model: string;
  endpoint: 'chat' | 'messages' | 'responses' | 'embeddings' | 'moderations';
  provider: string | null;
  upstreamModel: string | null;
  usage: C.Usage | null;
  /** True when the upstream never reported usage and the numbers are the gateway's estimate. */
  estimated: boolean;
  status: number;
  errorCode: string | null;
  latencyMs: number;
  /** The request used web search: the configured surcharge is added (Responses). */
  webSearch?: boolean;
};

export type BillingTicket = {
  /** Rate-limit headers for the response. */
  headers: Record<string, string>;
  /** Exactly once per request; later calls are ignored. */
  settle(report: UsageReport): Promise<void>;
};

/**
 * The billing seam of the request path: `begin` runs before any upstream call (the quota
 * reservation goes here), the ticket's `settle` exactly once after it (stream or not, client
 * gone or not). Plans, quotas and the ledger plug in here.
 */
export interface Billing {
  begin(ctx: { requestId: string; principal: Principal; model: string; multiplier: number; request: C.Request }): Promise<BillingTicket>;
}
