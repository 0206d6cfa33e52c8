// Plans, limits and quota reservations (docs/api.md, "Usage and limits"; docs/architecture.md, "Money").
import { randomToken } from '../runtime/secrets.ts';
import type { ResolvedConfig } from '../config/schema.ts';
import { GatewayError, errors } from '../runtime/errors.ts';
import type { Clock } from '../runtime/clock.ts';
import type { Principal } from '../auth/principal.ts';
import { CounterStoreUnavailableError, admitted, heldAmount, type AdmitResult, type CounterStore, type HoldSpec, type WindowSpec } from '../stores/index.ts';
import type { Billing, BillingTicket, BudgetHold, BudgetObserver, Reservation, UsageReport } from './hooks.ts';
import { tokensPerUnit, unitOf, unitTokens } from '../config/billing-rules.ts';
import { bucketsOf, resolveWeights, webSearchCallsOf, BUCKETS, type Buckets } from './buckets.ts';
import { money, nanoToUsd, priceLists, toNano, usdText, usdToNano, type CostEstimate, type Pricing } from './prices.ts';
import type { UsageLedger } from './ledger.ts';
import type { RequestTrails } from '../observe/request-trail.ts';
import { SettlementRetries } from './settle-retry.ts';
import { budgetsFor, keySpendKey, lastFormatted, nextUtcMidnight, nextUtcMonth, planOf, quotaKey, rankOf, rpmKey, userQuotaKey, userRpmKey, userSpendKey, utcDay, utcMonth } from './plans.ts';

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

/** A spend budget had no room: 429 budget_exceeded, with what is left and when the period ends. */
function budgetExceeded(hold: BudgetHold, spent: number, amount: number, now: number, headers: Record<string, string>, planId: string): GatewayError {
  const seconds = Math.max(0, (hold.until - now) / 1000);
  const remaining = Math.max(0, hold.limit - spent);
  const period = hold.period === 'daily' ? 'daily' : 'monthly';
  return new GatewayError(
    429,
    'rate_limit_error',
    'budget_exceeded',
    `Spend budget exceeded: this request may cost up to $${nanoToUsd(amount)}, $${nanoToUsd(remaining)} of the ${period} budget of $${nanoToUsd(hold.limit)} remain ${whose(hold.scope, planId)} until ${iso(hold.until)}.`,
    null,
    { ...headers, 'retry-after': String(Math.ceil(seconds)) },
    {
      limit_usd: nanoToUsd(hold.limit),
      spent_usd: nanoToUsd(Math.min(spent, hold.limit)),
      remaining_usd: nanoToUsd(remaining),
      period,
      reset_at: iso(hold.until),
      reset_seconds: Math.round(seconds * 1000) / 1000,
      scope: hold.scope,
    },
  );
}

/**
 * One quota of an admission: a level's daily tokens, or a spend budget (in nano-dollars). The
 * counter store takes their specs in this order and answers in it; everything else reads the kind.
 */
type Quota = { kind: 'tokens'; scope: LimitScope; spec: HoldSpec } | { kind: 'budget'; hold: BudgetHold; spec: HoldSpec };

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
    /** The model's prices (the catalog's, config over metadata); unknown by default. */
    private readonly pricingOf: (id: string) => Pricing | null | undefined = () => null,
    /** Told of spend under budgets (threshold alerts); none by default. */
    private readonly budgetObserver: BudgetObserver | null = null,
    /** The open requests' trails: admission and settlement are timed there (spans), settled usage recorded. */
    private readonly trails: Pick<RequestTrails, 'get'> | null = null,
  ) {}

  private readonly prices = priceLists();
  private readonly weightsOf = new WeakMap<object, Record<(typeof BUCKETS)[number], number>>();

  /** The spend budgets that hold now for this principal (its plan's, its key's and its user's own): daily and monthly. */
  private budgetHolds(principal: Principal, keyId: string, plan: ReturnType<typeof planOf>, now: number): BudgetHold[] {
    const holds: BudgetHold[] = [];
    const owner = { userId: principal.userId, keyId };
    const day = utcDay(now);
    const month = utcMonth(now);
    const add = (usd: string | undefined, scope: BudgetHold['scope'], period: BudgetHold['period']) => {
      if (usd === undefined) return;
      const start = period === 'daily' ? day : month;
      const key = scope === 'key' ? keySpendKey(owner, start) : userSpendKey(principal.userId, start);
      holds.push({ key, scope, period, periodStart: start, until: period === 'daily' ? nextUtcMidnight(now) : nextUtcMonth(now), limit: usdToNano(usd) });
    };
    const b = budgetsFor(plan, principal.budgets);
    add(b.keyDaily, 'key', 'daily');
    add(b.keyMonthly, 'key', 'monthly');
    add(b.userDaily, 'user', 'daily');
    add(b.userMonthly, 'user', 'monthly');
    return holds;
  }

  /**
   * The most a request can cost, in nano-dollars, under a budget. A model without a known price is
   * refused (or, when the operator allows it, held at 0: it costs nothing against the budget).
   */
  private mostCost(modelId: string, reserveTokens: number, estimate: CostEstimate | undefined): { amount: number; upTo?: number } {
    const model = this.modelById(modelId);
    const unit = model ? unitOf(model.endpoint) : 'token';
    const e: CostEstimate = estimate ?? (unit === 'token' || !model ? { input: reserveTokens, output: 0 } : { unit, quantity: reserveTokens / tokensPerUnit(model) });
    const prices = this.prices(this.pricingOf(modelId));
    const most = prices.maxCost(e);
    if (most !== null) {
      // Input nothing bounds: the most it can cost with the longest prompt the model takes, or no bound.
      if (!('input' in e) || e.mostInput === undefined) return { amount: toNano(most) };
      return { amount: toNano(most), upTo: Number.isFinite(e.mostInput) ? toNano(prices.maxCost({ input: e.mostInput, output: e.output })!) : Infinity };
    }
    if (this.config.budgetUnpricedModels === 'allow') return { amount: 0 };
    throw errors.forbidden(
      'model_price_unknown',
      `The model '${modelId}' has no known price, and your plan has a spend budget: this gateway refuses requests to unpriced models under a budget (the operator can give the model a \`pricing\`, or set \`budget_unpriced_models: allow\`).`,
      'model',
    );
  }

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

  begin(ctx: Parameters<Billing['begin']>[0]): Promise<BillingTicket> {
    // Timed on the request's trail when one is open (span gateway.quota.admit); otherwise the
    // lookup is all this adds (not async itself: no extra promise on the way).
    const trail = this.trails?.get(ctx.requestId);
    if (!trail) return this.reserve(ctx);
    const start = trail.now();
    return this.reserve(ctx).then(
      (ticket) => {
        trail.phase('quota.admit', start);
        return ticket;
      },
      (err: unknown) => {
        trail.phase('quota.admit', start, true);
        throw err;
      },
    );
  }

  /** Requests per minute counted, the quota and budgets reserved: the ticket, or the refusal. */
  private async reserve(ctx: Parameters<Billing['begin']>[0]): Promise<BillingTicket> {
    const { principal } = ctx;
    const { keyId, plan } = this.gate(principal, ctx.model);
    const now = this.clock.now();

    // Requests per minute checked and counted, then the daily quota checked and the most this
    // request can cost reserved: one atomic step in the counter store (one Redis round trip), for
    // the key and, where the plan limits it, for its user over all their keys and apps.
    const dayEnd = nextUtcMidnight(now);
    const amount = Math.ceil(ctx.reserveTokens * ctx.multiplier);
    // A prompt with input nothing bounds (docs/billing.md "What a hold bounds"): admitted when its
    // bounded part fits; it holds the most it can use when that fits too, else the whole limit.
    const e = ctx.reserveCost;
    const upTo = !e || !('input' in e) || e.mostInput === undefined ? undefined : Number.isFinite(e.mostInput) ? Math.ceil((e.mostInput + ctx.reserveTokens - e.input) * ctx.multiplier) : Infinity;
    const owner = { userId: principal.userId, keyId };
    const key = quotaKey(owner, now);
    const id = `${ctx.requestId}:${randomToken(6)}`;
    const ttlMs = ctx.ttlMs ?? this.config.reservationTtlMs;
    const keepUntil = Math.max(dayEnd, now + (ctx.ttlMs ?? 0));
    // Each level's window and quota, the key's first; the user's where the plan sets them.
    const windows = this.requestWindows(principal, keyId, plan);
    const quotas: Quota[] = [{ kind: 'tokens', scope: 'key', spec: { key, id, amount, upTo, limit: plan.daily_tokens, ttlMs, keepUntil } }];
    if (plan.user_daily_tokens !== undefined) quotas.push({ kind: 'tokens', scope: 'user', spec: { key: userQuotaKey(principal.userId, now), id, amount, upTo, limit: plan.user_daily_tokens, ttlMs, keepUntil } });
    // Spend budgets are quotas in nano-dollars, held in the same atomic step: reserved on every
    // level or on none.
    const budgets = this.budgetHolds(principal, keyId, plan, now);
    const cost = budgets.length ? this.mostCost(ctx.model, ctx.reserveTokens, ctx.reserveCost) : { amount: 0 };
    const costAmount = cost.amount;
    for (const b of budgets) quotas.push({ kind: 'budget', hold: b, spec: { key: b.key, id, amount: costAmount, upTo: cost.upTo, limit: b.limit, ttlMs, keepUntil: Math.max(b.until, now + (ctx.ttlMs ?? 0)) } });
    const specs = quotas.map((q) => q.spec);
    let admission: AdmitResult;
    try {
      admission = await this.counters.admit(windows, specs, now);
    } catch (err) {
      // Fail closed (503 counter_store_unavailable): never forwarded unmetered. An admission that
      // may have been applied all the same must not hold its tokens until the reservation expires.
      if (err instanceof CounterStoreUnavailableError && err.applied === 'unknown') {
        for (const q of specs) this.settlements.release(q.key, id, q.keepUntil);
      }
      throw err;
    }

    // The headers name the binding level: the one with the least left (of equals, the key's).
    const requests = this.requestsLeft(windows, admission);
    // What each quota held before this request: when a window refused, the quotas were not looked
    // at, so they are read now (a refusal only).
    const used = admission.quotas ? admission.quotas.map((q) => q.used) : await Promise.all(specs.map((q) => this.counters.reserved(q.key, now).then((r) => r.settled + r.reserved)));
    const ok = admitted(admission);
    // Each quota with what the store said of it, matched once here by position (the store answers
    // in the order asked): the token quotas' state, and the first budget that refused.
    const quotasLeft: { scope: LimitScope; limit: number; before: number; allowed: boolean; remaining: number }[] = [];
    let budgetRefused: { hold: BudgetHold; before: number } | null = null;
    for (let i = 0; i < quotas.length; i++) {
      const q = quotas[i]!;
      const before = used[i]!;
      const allowed = admission.quotas?.[i]?.allowed ?? false;
      if (q.kind === 'tokens') quotasLeft.push({ scope: q.scope, limit: q.spec.limit, before, allowed, remaining: Math.max(0, q.spec.limit - before - (ok ? heldAmount(q.spec, before) : 0)) });
      else if (!budgetRefused && admission.quotas !== null && !allowed) budgetRefused = { hold: q.hold, before };
    }
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
      // A budget names the refusal only when every token quota had room.
      if (!quotasLeft.some((x) => !x.allowed) && budgetRefused) throw budgetExceeded(budgetRefused.hold, budgetRefused.before, costAmount, now, headers, plan.id);
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
    const userKey = quotas.find((q) => q.kind === 'tokens' && q.scope === 'user')?.spec.key ?? null;
    const reservation: Reservation = { requestId: ctx.requestId, keyId, userId: principal.userId, appId: principal.appId ?? null, model: ctx.model, multiplier: ctx.multiplier, key, userKey, id, dayEnd, amount, at: now };
    if (budgets.length) Object.assign(reservation, { budgets, costAmount });
    return { headers, reservation, settle: this.settler(reservation, false) };
  }

  resume(reservation: Reservation): BillingTicket {
    return { headers: {}, reservation, settle: this.settler(reservation, true) };
  }

  /**
   * Tokens billed for a report: reported (or estimated) token usage, each bucket by the model's
   * weight, else the metered units by the model's rule; then the multiplier, rounded up.
   */
  billedTokens(report: UsageReport, multiplier: number, buckets: Buckets | null = report.usage ? bucketsOf(report.usage) : null): number {
    const surcharge = report.webSearch ? this.config.webSearchSurchargeTokens : 0;
    const model = this.modelById(report.model);
    let raw: number | ReturnType<typeof money>;
    if (buckets) {
      const w = model ? this.weights(model) : null;
      raw = 0;
      if (w === null) for (const b of BUCKETS) raw += buckets[b];
      else {
        // Weights are decimals (0.1): summed exactly, so 1,000 cache reads at 0.1 are 100 tokens, not 101.
        let sum = money(0);
        for (const b of BUCKETS) if (buckets[b]) sum = sum.plus(money(w[b]).times(buckets[b]));
        raw = sum;
      }
    } else raw = report.metered && model ? unitTokens(model, report.metered.unit, report.metered.quantity) : 0;
    // Never bill what produced nothing; never refund what produced something.
    const positive = typeof raw === 'number' ? raw > 0 : raw.gt(0);
    if (!positive) return buckets ? surcharge : 0;
    const times = typeof raw === 'number' && Number.isInteger(multiplier) ? raw * multiplier : (typeof raw === 'number' ? money(raw) : raw).times(multiplier).ceil().toNumber();
    return times + surcharge;
  }

  /** A model's bucket weights, or null when all are 1 (the plain sum then). */
  private weights(model: ResolvedConfig['models'][number]): Record<(typeof BUCKETS)[number], number> | null {
    if (!model.billing?.weights) return null;
    let w = this.weightsOf.get(model);
    if (!w) this.weightsOf.set(model, (w = resolveWeights(model.billing.weights)));
    return w;
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
      // The request's trail, when one is open: what was settled, for the request log and the span.
      const trail = this.trails?.get(report.requestId);
      const start = trail?.now() ?? 0;
      const u = report.usage;
      const buckets = u ? bucketsOf(u) : null;
      const billed = this.billedTokens(report, res.multiplier, buckets);
      if (trail) {
        trail.usage = { inputTokens: u?.inputTokens ?? 0, outputTokens: u?.outputTokens ?? 0, billedTokens: billed, cachedTokens: buckets?.cache_read ?? 0, reasoningTokens: buckets?.reasoning ?? 0 };
        if (report.upstreamModel && !trail.responseModel) trail.responseModel = report.upstreamModel;
      }
      // What it cost in US dollars; null when a price it needed is unknown.
      const price = this.prices(this.pricingOf(report.model)).cost(u, report.metered, buckets);
      const cost = price === null ? null : usdText(price);
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
          // The totals, and their parts as the buckets have them (never more than their total).
          promptTokens: u?.inputTokens ?? 0,
          completionTokens: u?.outputTokens ?? 0,
          cachedTokens: buckets?.cache_read ?? 0,
          reasoningTokens: buckets?.reasoning ?? 0,
          cacheWriteTokens: buckets ? buckets.cache_write + buckets.cache_write_1h : 0,
          cacheWrite1hTokens: buckets?.cache_write_1h ?? 0,
          audioInputTokens: buckets?.audio_input ?? 0,
          imageInputTokens: buckets?.image_input ?? 0,
          audioOutputTokens: buckets?.audio_output ?? 0,
          imageOutputTokens: buckets?.image_output ?? 0,
          webSearchCalls: webSearchCallsOf(u),
          cost,
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
      // The user's counter (when the plan limits the user's day) settles the same way, on its own;
      // so does each budget, to the real cost (a cost that is unknown after all keeps what was held).
      const spent = price !== null ? toNano(price) : this.config.budgetUnpricedModels === 'allow' ? 0 : (res.costAmount ?? 0);
      try {
        await Promise.all([
          this.settlements.settle(res.key, res.id, billed, res.dayEnd, onlyIfHeld),
          res.userKey ? this.settlements.settle(res.userKey, res.id, billed, res.dayEnd, onlyIfHeld) : null,
          ...(res.budgets ?? []).map(async (b) => {
            const after = await this.settlements.settle(b.key, res.id, spent, b.until, onlyIfHeld);
            if (after !== null && spent > 0) this.observeSpend(res, b, after - spent, after);
          }),
        ]);
      } catch (err) {
        trail?.phase('quota.settle', start, true);
        throw err;
      }
      trail?.phase('quota.settle', start);
    };
  }

  private observeSpend(res: Reservation, b: BudgetHold, beforeNano: number, afterNano: number): void {
    try {
      this.budgetObserver?.observe({ scope: b.scope, userId: res.userId, keyId: b.scope === 'key' ? res.keyId : null, period: b.period, periodStart: b.periodStart, limitNano: b.limit, beforeNano, afterNano, at: this.clock.now() });
    } catch {
      // Alerts never stand in a request's way.
    }
  }
}
