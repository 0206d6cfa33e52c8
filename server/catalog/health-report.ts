// GET /v1/models/status (docs/api.md, "Models"): rolling availability per model and upstream, from the attempts
// the routing layer records — the database's per-minute sums from every instance, plus this
// instance's not-yet-written minute buckets. Per configured upstream and pool key, the share of the
// traffic and the router's breaker and cool-down states.
import type { z } from 'zod';
import type { ModelStatus, ModelStatusList, ModelStatusQuery } from '../../contract/models.ts';
import { unservableModels } from '../boot/warnings.ts';
import { LATENCY_BOUNDS, emptyHist, type Bucket } from '../routing/health.ts';
import { knownModel } from '../routing/targets.ts';
import type { ModelConfig, ResolvedConfig } from '../config/schema.ts';
import type { Database } from '../db/client.ts';
import type { Clock } from '../runtime/clock.ts';
import type { HealthRecorder } from '../routing/health.ts';
import { keysOf } from '../routing/key-pool.ts';
import type { Router } from '../routing/router.ts';
import type { Catalog } from './catalog.ts';

/** What the models status page reads. */
export type HealthReportDeps = {
  config: ResolvedConfig;
  db: Database;
  clock: Clock;
  catalog: Catalog;
  health: Pick<HealthRecorder, 'withPending'>;
  router: Pick<Router, 'upstreamView' | 'keyView'>;
};

const WINDOWS = { '1h': [3_600_000, 300_000], '24h': [86_400_000, 3_600_000], '7d': [604_800_000, 3_600_000], '30d': [2_592_000_000, 86_400_000] } as const;
/** The current state looks at the last 15 minutes. */
const RECENT_MS = 15 * 60_000;

type Acc = { requests: number; errors: number; latencySum: number; latencyMax: number; hist: number[]; lastError: string | null; lastErrorAt: number | null; lastSuccessAt: number | null };
const acc = (): Acc => ({ requests: 0, errors: 0, latencySum: 0, latencyMax: 0, hist: emptyHist(), lastError: null, lastErrorAt: null, lastSuccessAt: null });

function add(a: Acc, b: Bucket) {
  a.requests += b.requests;
  a.errors += b.errors;
  a.latencySum += b.latencySum;
  a.latencyMax = Math.max(a.latencyMax, b.latencyMax);
  b.hist.forEach((n, i) => (a.hist[i]! += n));
  if (b.lastErrorAt !== null && (a.lastErrorAt === null || b.lastErrorAt >= a.lastErrorAt)) {
    a.lastErrorAt = b.lastErrorAt;
    a.lastError = b.lastError;
  }
  if (b.lastSuccessAt !== null) a.lastSuccessAt = Math.max(a.lastSuccessAt ?? 0, b.lastSuccessAt);
}

/**
 * The median, interpolated linearly within the histogram bucket that holds it (as Prometheus'
 * histogram_quantile does), the bucket's top capped at the largest latency observed: never above
 * the maximum, and 3 ms attempts no longer report the 50 ms bound.
 */
export function p50(a: Pick<Acc, 'hist' | 'latencyMax' | 'latencySum'>): number | null {
  const total = a.hist.reduce((x, y) => x + y, 0);
  if (!total) return null;
  // Every attempt in one bucket: their mean lies inside it and is the better estimate.
  if (a.hist.some((n) => n === total)) return Math.round((a.latencySum / total) * 10) / 10;
  const rank = total / 2;
  let below = 0;
  for (let i = 0; i < a.hist.length; i++) {
    const n = a.hist[i]!;
    if (n && below + n >= rank) {
      const lower = i === 0 ? 0 : LATENCY_BOUNDS[i - 1]!;
      const upper = Math.min(i < LATENCY_BOUNDS.length ? LATENCY_BOUNDS[i]! : a.latencyMax, a.latencyMax);
      if (upper <= lower) return upper;
      return Math.round((lower + ((rank - below) / n) * (upper - lower)) * 10) / 10;
    }
    below += n;
  }
  return a.latencyMax;
}

const availability = (a: Acc) => (a.requests ? (a.requests - a.errors) / a.requests : null);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const round = (x: number | null) => (x === null ? null : Math.round(x * 10_000) / 10_000);
const share = (part: Acc, whole: Acc) => (whole.requests ? round(part.requests / whole.requests) : null);

type UpstreamStatus = z.infer<typeof ModelStatus>['upstreams'][number];

/** The model's configured upstreams in order, their traffic attributed by provider (samples do not name the upstream model). */
function upstreamsOf(services: HealthReportDeps, model: ModelConfig, total: Acc, byProvider: Map<string, Acc>, byKey: Map<string, Acc>): UpstreamStatus[] {
  return model.upstreams.map((u) => {
    const a = byProvider.get(u.provider) ?? acc();
    const view = services.router.upstreamView(u.provider, u.model);
    const provider = services.catalog.providers.get(u.provider);
    // A provider without a pool is one key labelled with its id: no per-key rows.
    const keys = provider?.api_keys ? keysOf(provider) : [];
    return {
      provider: u.provider,
      upstream_model: u.model,
      weight: u.weight,
      requests: a.requests,
      errors: a.errors,
      availability: round(availability(a)),
      latency_ms_p50: p50(a),
      share: share(a, total),
      last_error: a.lastError,
      last_error_at: iso(a.lastErrorAt),
      // The upstream's view is never `cooling_down` (that is a key's).
      breaker: { state: view.state === 'cooling_down' ? 'closed' : view.state, until: view.until, reason: view.reason },
      in_flight: view.in_flight,
      latency_ms_ewma: view.latency_ms_ewma,
      keys: keys.map((k) => {
        const ka = byKey.get(`${u.provider}\u0000${k.label}`) ?? acc();
        const kv = services.router.keyView(k.label, u.model);
        return {
          key: k.label,
          requests: ka.requests,
          errors: ka.errors,
          availability: round(availability(ka)),
          latency_ms_p50: p50(ka),
          share: share(ka, a),
          state: kv.state === 'cooling_down' ? ('cooling_down' as const) : ('ready' as const),
          until: kv.until,
          reason: kv.reason,
          in_flight: kv.in_flight,
        };
      }),
    };
  });
}

export async function modelStatus(services: HealthReportDeps, query: z.infer<typeof ModelStatusQuery>): Promise<z.infer<typeof ModelStatusList>> {
  const now = services.clock.now();
  const [span, size] = WINDOWS[query.window];
  const last = Math.floor(now / size) * size;
  const count = Math.round(span / size);
  const first = last - (count - 1) * size;
  const models = query.model ? [query.model] : services.catalog.entries.map((e) => e.id);
  if (query.model) knownModel(services.catalog, query.model);

  const { written: rows, pending } = await services.health.withPending(() =>
    services.db.prisma.modelHealthSample.findMany({
      where: { bucketStart: { gte: new Date(first) }, ...(query.model ? { model: query.model } : {}) },
    }),
  );
  const samples: Bucket[] = rows.map((r) => ({
    model: r.model,
    provider: r.provider,
    key: r.keyLabel,
    start: r.bucketStart.getTime(),
    requests: r.requests,
    errors: r.errors,
    latencySum: Number(r.latencyMsSum),
    latencyMax: r.latencyMsMax,
    hist: r.latencyHist.length ? r.latencyHist : emptyHist(),
    lastError: r.lastErrorCode,
    lastErrorAt: r.lastErrorAt?.getTime() ?? (r.errors ? r.bucketStart.getTime() : null),
    lastSuccessAt: r.lastSuccessAt?.getTime() ?? null,
  }));
  samples.push(...pending.filter((b) => b.start >= first && (!query.model || b.model === query.model)));

  const unservable = unservableModels(services.config);
  const data: z.infer<typeof ModelStatus>[] = models.map((model) => {
    const total = acc();
    const recent = acc();
    const byProvider = new Map<string, Acc>();
    const byKey = new Map<string, Acc>();
    const history = Array.from({ length: count }, acc);
    for (const s of samples) {
      if (s.model !== model) continue;
      add(total, s);
      if (s.start >= now - RECENT_MS) add(recent, s);
      if (!byProvider.has(s.provider)) byProvider.set(s.provider, acc());
      add(byProvider.get(s.provider)!, s);
      if (s.key) {
        const k = `${s.provider}\u0000${s.key}`;
        if (!byKey.has(k)) byKey.set(k, acc());
        add(byKey.get(k)!, s);
      }
      const i = Math.floor((s.start - first) / size);
      if (i >= 0 && i < count) add(history[i]!, s);
    }
    const config = services.catalog.model(model)!;
    const a = availability(recent);
    const problem = unservable.get(model) ?? null;
    // A model that cannot work is not "unknown" for lack of traffic, nor "operational" on old traffic.
    const status = problem ? 'misconfigured' : a === null ? 'unknown' : a >= 0.99 ? 'operational' : a >= 0.5 ? 'degraded' : 'down';
    return {
      model,
      status,
      problem,
      availability: round(availability(total)),
      error_rate: total.requests ? round(total.errors / total.requests) : null,
      requests: total.requests,
      errors: total.errors,
      latency_ms_avg: total.requests ? Math.round(total.latencySum / total.requests) : null,
      latency_ms_p50: p50(total),
      last_success_at: iso(total.lastSuccessAt),
      last_error_at: iso(total.lastErrorAt),
      last_error: total.lastError,
      strategy: config.strategy,
      upstreams: upstreamsOf(services, config, total, byProvider, byKey),
      history: history.map((h, i) => ({
        start: new Date(first + i * size).toISOString(),
        requests: h.requests,
        errors: h.errors,
        availability: round(availability(h)),
        latency_ms_avg: h.requests ? Math.round(h.latencySum / h.requests) : null,
        latency_ms_p50: p50(h),
      })),
    };
  });
  return { object: 'list', window: { start: new Date(first).toISOString(), end: new Date(last + size).toISOString(), bucket_seconds: size / 1000 }, data };
}
