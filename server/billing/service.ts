// Plans, limits and quota reservations (spec parts 1, 5, 7, 8; DESIGN.md §4).
import { randomToken } from '../auth/secrets.ts';
import type { ResolvedConfig } from '../config/schema.ts';
import { GatewayError, errors } from '../http/errors.ts';
import type { Clock } from '../runtime/clock.ts';
import { CounterStoreUnavailableError, type CounterStore } from '../stores/index.ts';
import type { Billing, BillingTicket, Reservation, UsageReport } from './hooks.ts';
import { unitTokens } from './rules.ts';
import type { UsageLedger } from './ledger.ts';
import { SettlementRetries } from './settle-retry.ts';
import { lastFormatted, nextUtcMidnight, planOf, quotaKey, rankOf, rpmKey } from './plans.ts';

const iso = (ms: number) => new Date(ms).toISOString();

export function rateLimited(code: 'rate_limit_exceeded' | 'daily_quota_exceeded' | 'too_many_active_jobs', message: string, limit: number, remaining: number, resetAt: number, now: number, headers: Record<string, string>): GatewayError {
  const seconds = Math.max(0, (resetAt - now) / 1000);
  return new GatewayError(429, 'rate_limit_error', code, message, null, { ...headers, 'retry-after': String(Math.ceil(seconds)) }, {
    limit,
    remaining,
    reset_at: iso(resetAt),
    reset_seconds: Math.round(seconds * 1000) / 1000,
  });
}

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

  async begin(ctx: Parameters<Billing['begin']>[0]): Promise<BillingTicket> {
    const { principal } = ctx;
    const model = this.modelById(ctx.model);
    if (model?.premium && rankOf(this.config, principal.planId) < rankOf(this.config, model.required_plan)) {
      throw errors.forbidden('model_requires_higher_plan', `The model '${ctx.model}' requires the '${model.required_plan}' plan or higher.`, 'model');
    }
    const plan = planOf(this.config, principal.planId);
    const now = this.clock.now();

    // Requests per minute checked and counted, then the daily quota checked and the most this
    // request can cost reserved: one atomic step in the counter store (one Redis round trip).
    const dayEnd = nextUtcMidnight(now);
    const amount = Math.ceil(ctx.reserveTokens * ctx.multiplier);
    const key = quotaKey(principal.keyId, now);
    const id = `${ctx.requestId}:${randomToken(6)}`;
    let admitted: Awaited<ReturnType<CounterStore['admit']>>;
    try {
      admitted = await this.counters.admit(
        { key: rpmKey(principal.keyId), limit: plan.requests_per_minute, windowMs: 60_000 },
        { key, id, amount, limit: plan.daily_tokens, ttlMs: ctx.ttlMs ?? this.config.reservationTtlMs, keepUntil: Math.max(dayEnd, now + (ctx.ttlMs ?? 0)) },
        now,
      );
    } catch (err) {
      // Fail closed (503 counter_store_unavailable): never forwarded unmetered. An admission that
      // may have been applied all the same must not hold its tokens until the reservation expires.
      if (err instanceof CounterStoreUnavailableError && err.applied === 'unknown') this.settlements.release(key, id, dayEnd);
      throw err;
    }
    const { rpm, quota: r } = admitted;
    const headers: Record<string, string> = {
      'x-ratelimit-limit-requests': String(plan.requests_per_minute),
      'x-ratelimit-remaining-requests': String(Math.max(0, plan.requests_per_minute - rpm.value)),
      'x-ratelimit-reset-requests': this.rpmResetIso(rpm.resetAt),
      'x-ratelimit-limit-tokens': String(plan.daily_tokens),
      'x-ratelimit-reset-tokens': this.dayEndIso(dayEnd),
    };
    if (!rpm.allowed || !r) {
      const q = await this.counters.reserved(key, now);
      headers['x-ratelimit-remaining-tokens'] = String(Math.max(0, plan.daily_tokens - q.settled - q.reserved));
      throw rateLimited('rate_limit_exceeded', `Rate limit reached: ${plan.requests_per_minute} requests per minute on the '${plan.id}' plan.`, plan.requests_per_minute, 0, rpm.resetAt, now, headers);
    }

    if (!r.allowed) {
      const remaining = Math.max(0, plan.daily_tokens - r.used);
      headers['x-ratelimit-remaining-tokens'] = String(remaining);
      throw rateLimited(
        'daily_quota_exceeded',
        `Daily token quota exceeded: this request may use up to ${amount} tokens (after the model's multiplier), ${remaining} of ${plan.daily_tokens} remain on the '${plan.id}' plan until 00:00 UTC.`,
        plan.daily_tokens,
        remaining,
        dayEnd,
        now,
        headers,
      );
    }
    headers['x-ratelimit-remaining-tokens'] = String(Math.max(0, plan.daily_tokens - r.used - amount));
    const reservation: Reservation = { requestId: ctx.requestId, keyId: principal.keyId, userId: principal.userId, appId: principal.appId ?? null, model: ctx.model, multiplier: ctx.multiplier, key, id, dayEnd, amount };
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
          createdAt: this.nowIso(this.clock.now()),
        });
      }
      await this.settlements.settle(res.key, res.id, billed, res.dayEnd, onlyIfHeld);
    };
  }
}
