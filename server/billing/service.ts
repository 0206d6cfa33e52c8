// Plans, limits and quota reservations (spec parts 1, 5, 7, 8; DESIGN.md §4).
import { randomToken } from '../runtime/secrets.ts';
import type { ResolvedConfig } from '../config/schema.ts';
import { GatewayError, errors } from '../runtime/errors.ts';
import type { Clock } from '../runtime/clock.ts';
import type { Principal } from '../auth/principal.ts';
import { CounterStoreUnavailableError, admitted, type AdmitResult, type CounterStore, type HoldSpec, type WindowSpec } from '../stores/index.ts';
import type { Billing, BillingTicket, Reservation, UsageReport } from './hooks.ts';
import { unitTokens } from '../config/billing-rules.ts';
import type { UsageLedger } from './ledger.ts';
import { SettlementRetries } from './settle-retry.ts';
import { lastFormatted, nextUtcMidnight, planOf, quotaKey, rankOf, rpmKey, userQuotaKey, userRpmKey } from './plans.ts';

const iso = (ms: number) => new Date(ms).toISOString();

export type LimitScope = 'key' | 'user';

export function rateLimited(
  code: 'rate_limit_exceeded' | 'daily_quota_exceeded' | 'too_many_active_jobs',
  message: string,
  limit: number,
  remaining: number,
  resetAt: number,
  now: number,
  headers: Record<string, string>,
  scope: LimitScope,
): GatewayError {
  const seconds = Math.max(0, (resetAt - now) / 1000);
  return new GatewayError(429, 'rate_limit_error', code, message, null, { ...headers, 'retry-after': String(Math.ceil(seconds)) }, {
    limit,
    remaining,
    reset_at: iso(resetAt),
    reset_seconds: Math.round(seconds * 1000) / 1000,
    scope,
  });
}

/** How a limit is named in a 429's message, by whose it is. */
export const whose = (scope: LimitScope, planId: string) => (scope === 'key' ? `per key on the '${planId}' plan` : `across all your keys and connected apps on the '${planId}' plan`);

export class QuotaBilling implements Billing {
  constructor(
    private readonly config: ResolvedConfig,
    private readonly counters: CounterStore,
    private readonly ledger: UsageLedger,
    private readonly clock: Clock,
    /** The model's configuration by id (the catalog's index, not a scan per request). */
    private readonly modelById: (id: string) => ResolvedConfig['models'][number] | undefined,
    /** Settlements the counter store did not take (Redis down) are retried here until it does. */
    readonly settlements: SettlementRetries = new SettlementRetries(counters, clock, { warn: () => {}, error: () => {} }),
  ) {}

  private readonly rpmResetIso = lastFormatted(iso);
  private readonly dayEndIso = lastFormatted(iso);
  private readonly nowIso = lastFormatted(iso);

  /** The caller's key, and its plan when the model is open to it; else the refusal. */
  private gate(principal: Principal, modelId: string): { keyId: string; plan: ReturnType<typeof planOf> } {
    // Every billed request has a key (a grant's, for an app): the authentication layer keeps the
    // dashboard's session off inference routes, and this keeps any route from billing nobody.
    if (!principal.keyId) throw errors.unauthenticated('This endpoint takes an API key or an OAuth access token, not a sign-in session.', 'api_key_required');
    const model = this.modelById(modelId);
    if (model?.premium && rankOf(this.config, principal.planId) < rankOf(this.config, model.required_plan)) {
      throw errors.forbidden('model_requires_higher_plan', `The model '${modelId}' requires the '${model.required_plan}' plan or higher.`, 'model');
    }
    return { keyId: principal.keyId, plan: planOf(this.config, principal.planId) };
  }

  /** The requests-per-minute windows of a call: the key's, and its user's where the plan sets one. */
  private requestWindows(principal: Principal, keyId: string, plan: ReturnType<typeof planOf>): (WindowSpec & { scope: LimitScope })[] {
    const windows: (WindowSpec & { scope: LimitScope })[] = [{ scope: 'key', key: rpmKey({ userId: principal.userId, keyId }), limit: plan.requests_per_minute, windowMs: 60_000 }];
    if (plan.user_requests_per_minute !== undefined) windows.push({ scope: 'user', key: userRpmKey(principal.userId), limit: plan.user_requests_per_minute, windowMs: 60_000 });
    return windows;
  }

  /** The requests' headers and the binding window (the one with the least left; of equals, the key's). */
  private requestsLeft(windows: (WindowSpec & { scope: LimitScope })[], admission: AdmitResult) {
    const left = windows.map((spec, i) => {
      const w = admission.windows[i]!;
      return { scope: spec.scope, limit: spec.limit, remaining: Math.max(0, spec.limit - w.value), resetAt: w.resetAt, allowed: w.allowed };
    });
    const binding = left.reduce((a, b) => (b.remaining < a.remaining ? b : a));
    const headers: Record<string, string> = {
      'x-ratelimit-limit-requests': String(binding.limit),
      'x-ratelimit-remaining-requests': String(binding.remaining),
      'x-ratelimit-reset-requests': this.rpmResetIso(binding.resetAt),
    };
    return { headers, refused: left.find((x) => !x.allowed) ?? null };
  }

  async admit(ctx: Parameters<Billing['admit']>[0]): Promise<Record<string, string>> {
    const { keyId, plan } = this.gate(ctx.principal, ctx.model);
    const now = this.clock.now();
    const windows = this.requestWindows(ctx.principal, keyId, plan);
    const { headers, refused } = this.requestsLeft(windows, await this.counters.admit(windows, [], now));
    if (refused) throw rateLimited('rate_limit_exceeded', `Rate limit reached: ${refused.limit} requests per minute ${whose(refused.scope, plan.id)}.`, refused.limit, 0, refused.resetAt, now, headers, refused.scope);
    return headers;
  }

  async begin(ctx: Parameters<Billing['begin']>[0]): Promise<BillingTicket> {
    const { principal } = ctx;
    const { keyId, plan } = this.gate(principal, ctx.model);
    const now = this.clock.now();

    // Requests per minute checked and counted, then the daily quota checked and the most this
    // request can cost reserved: one atomic step in the counter store (one Redis round trip), for
    // the key and, where the plan limits it, for its user over all their keys and apps.
    const dayEnd = nextUtcMidnight(now);
    const amount = Math.ceil(ctx.reserveTokens * ctx.multiplier);
    const owner = { userId: principal.userId, keyId };
    const key = quotaKey(owner, now);
    const id = `${ctx.requestId}:${randomToken(6)}`;
    const ttlMs = ctx.ttlMs ?? this.config.reservationTtlMs;
    const keepUntil = Math.max(dayEnd, now + (ctx.ttlMs ?? 0));
    // Each level's window and quota, the key's first; the user's where the plan sets them.
    const windows = this.requestWindows(principal, keyId, plan);
    const quotas: (HoldSpec & { scope: LimitScope })[] = [{ scope: 'key', key, id, amount, limit: plan.daily_tokens, ttlMs, keepUntil }];
    if (plan.user_daily_tokens !== undefined) quotas.push({ scope: 'user', key: userQuotaKey(principal.userId, now), id, amount, limit: plan.user_daily_tokens, ttlMs, keepUntil });
    let admission: AdmitResult;
    try {
      admission = await this.counters.admit(windows, quotas, now);
    } catch (err) {
      // Fail closed (503 counter_store_unavailable): never forwarded unmetered. An admission that
      // may have been applied all the same must not hold its tokens until the reservation expires.
      if (err instanceof CounterStoreUnavailableError && err.applied === 'unknown') {
        for (const q of quotas) this.settlements.release(q.key, id, dayEnd);
      }
      throw err;
    }

    // The headers name the binding level: the one with the least left (of equals, the key's).
    const requests = this.requestsLeft(windows, admission);
    // What each quota held before this request: when a window refused, the quotas were not looked
    // at, so they are read now (a refusal only).
    const used = admission.quotas ? admission.quotas.map((q) => q.used) : await Promise.all(quotas.map((q) => this.counters.reserved(q.key, now).then((r) => r.settled + r.reserved)));
    const ok = admitted(admission);
    const quotasLeft = quotas.map((spec, i) => ({
      scope: spec.scope,
      limit: spec.limit,
      before: used[i]!,
      allowed: admission.quotas?.[i]!.allowed ?? false,
      remaining: Math.max(0, spec.limit - used[i]! - (ok ? amount : 0)),
    }));
    const tokens = quotasLeft.reduce((a, b) => (b.remaining < a.remaining ? b : a));
    const headers: Record<string, string> = {
      ...requests.headers,
      'x-ratelimit-limit-tokens': String(tokens.limit),
      'x-ratelimit-remaining-tokens': String(tokens.remaining),
      'x-ratelimit-reset-tokens': this.dayEndIso(dayEnd),
    };
    if (!ok) {
      const w = requests.refused;
      if (w) throw rateLimited('rate_limit_exceeded', `Rate limit reached: ${w.limit} requests per minute ${whose(w.scope, plan.id)}.`, w.limit, 0, w.resetAt, now, headers, w.scope);
      const q = quotasLeft.find((x) => !x.allowed)!;
      const remaining = Math.max(0, q.limit - q.before);
      throw rateLimited(
        'daily_quota_exceeded',
        `Daily token quota exceeded: this request may use up to ${amount} tokens (after the model's multiplier), ${remaining} of ${q.limit} remain ${whose(q.scope, plan.id)} until 00:00 UTC.`,
        q.limit,
        remaining,
        dayEnd,
        now,
        headers,
        q.scope,
      );
    }
    const userKey = quotas.find((q) => q.scope === 'user')?.key ?? null;
    const reservation: Reservation = { requestId: ctx.requestId, keyId, userId: principal.userId, appId: principal.appId ?? null, model: ctx.model, multiplier: ctx.multiplier, key, userKey, id, dayEnd, amount, at: now };
    return { headers, reservation, settle: this.settler(reservation, false) };
  }

  resume(reservation: Reservation): BillingTicket {
    return { headers: {}, reservation, settle: this.settler(reservation, true) };
  }

  /** Tokens billed for a report: reported (or estimated) token usage, else the metered units by the model's rule. */
  billedTokens(report: UsageReport, multiplier: number): number {
    const surcharge = report.webSearch ? this.config.webSearchSurchargeTokens : 0;
    const u = report.usage;
    const model = this.modelById(report.model);
    const raw = u ? u.inputTokens + u.outputTokens : report.metered && model ? unitTokens(model, report.metered.unit, report.metered.quantity) : 0;
    // Never bill what produced nothing; never refund what produced something.
    return raw > 0 ? Math.ceil(raw * multiplier) + surcharge : u ? surcharge : 0;
  }

  /**
   * The settlement of one reservation, once per ticket. `onlyIfHeld` (a resumed reservation): the
   * counter takes it only while the reservation is held, so two instances ending the same job —
   * or one ending it twice across a restart — count it once; the ledger's unique request id keeps
   * one record.
   */
  private settler(res: Reservation, onlyIfHeld: boolean): BillingTicket['settle'] {
    let settled = false;
    return async (report) => {
      if (settled) return;
      settled = true;
      const u = report.usage;
      const billed = this.billedTokens(report, res.multiplier);
      // The ledger first: a counter store that fails here (Redis down) must not lose the record.
      // The settlement is then retried until the store takes it, exactly once (settle-retry.ts).
      // Failed requests are recorded too (billed 0 unless they produced something): usage reports
      // count them as requests with errors.
      {
        this.ledger.write({
          requestId: report.requestId,
          apiKeyId: res.keyId,
          userId: res.userId,
          oauthAppId: res.appId,
          model: report.model,
          provider: report.provider,
          upstreamModel: report.upstreamModel,
          endpoint: report.endpoint,
          promptTokens: u?.inputTokens ?? 0,
          completionTokens: u?.outputTokens ?? 0,
          cachedTokens: u?.cachedTokens ?? 0,
          reasoningTokens: u?.reasoningTokens ?? 0,
          surchargeTokens: report.webSearch ? this.config.webSearchSurchargeTokens : 0,
          meteredUnit: report.metered?.unit ?? null,
          meteredQuantity: report.metered?.quantity ?? null,
          multiplier: res.multiplier,
          billedTokens: billed,
          usageSource: report.estimated ? 'estimated' : 'reported',
          status: report.status,
          errorCode: report.errorCode,
          latencyMs: report.latencyMs,
          createdAt: this.nowIso(res.at ?? res.dayEnd - 86_400_000),
        });
      }
      // The user's counter (when the plan limits the user's day) settles the same way, on its own.
      await Promise.all([this.settlements.settle(res.key, res.id, billed, res.dayEnd, onlyIfHeld), res.userKey ? this.settlements.settle(res.userKey, res.id, billed, res.dayEnd, onlyIfHeld) : null]);
    };
  }
}
