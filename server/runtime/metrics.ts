import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Prometheus metrics of one gateway process. */
export function createMetrics() {
  const registry = new Registry();
  // prom-client's names already say process_/nodejs_: the prefix only adds the gateway's name.
  collectDefaultMetrics({ register: registry, prefix: 'gateway_' });
  return {
    registry,
    /**
     * The text GET /metrics serves: this registry's; a cluster worker replaces it with the sum over
     * every worker (server/runtime/cluster.ts), since a scrape reaches one worker only.
     */
    scrape: (): Promise<string> => registry.metrics(),
    requests: new Counter({
      name: 'gateway_http_requests_total',
      help: 'HTTP requests answered, by route template, method and status.',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [registry],
    }),
    latency: new Histogram({
      name: 'gateway_http_request_duration_seconds',
      help: 'Time from request to response, by route template.',
      labelNames: ['method', 'route'] as const,
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300],
      registers: [registry],
    }),
    upstreamAttempts: new Counter({
      name: 'gateway_upstream_attempts_total',
      help: 'Calls to upstream providers, by provider, model and outcome (ok, error, timeout).',
      labelNames: ['provider', 'model', 'outcome'] as const,
      registers: [registry],
    }),
    upstreamKeyAttempts: new Counter({
      name: 'gateway_upstream_key_attempts_total',
      help: "Calls to upstream providers by provider, key (its alias or index: never the key) and outcome (ok, error).",
      labelNames: ['provider', 'key', 'outcome'] as const,
      registers: [registry],
    }),
    routingSkips: new Counter({
      name: 'gateway_routing_skips_total',
      help: 'Candidates passed over before any call, by provider, key and reason (circuit_open, circuit_half_open, cooling_down, key_limit).',
      labelNames: ['provider', 'key', 'reason'] as const,
      registers: [registry],
    }),
    breakerOpenings: new Counter({
      name: 'gateway_circuit_breaker_openings_total',
      help: "Circuit breakers this instance opened, by provider and upstream model.",
      labelNames: ['provider', 'upstream_model'] as const,
      registers: [registry],
    }),
    keyCooldowns: new Counter({
      name: 'gateway_key_cooldowns_total',
      help: 'Keys set to cool down after a 429, 401, 402 or 403, by provider, key and status.',
      labelNames: ['provider', 'key', 'reason'] as const,
      registers: [registry],
    }),
    requestLogDropped: new Counter({
      name: 'gateway_request_log_dropped_total',
      help: 'Request log records dropped because the database did not take them in time (the log is diagnostics: money is in the ledger), or refused one (reason rejected).',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    ledgerRejected: new Counter({
      name: 'gateway_ledger_rejected_total',
      help: 'Usage records the database refused for their content, set aside in DATA_DIR/ledger/rejected/ (the others of their batch were written).',
      registers: [registry],
    }),
    overhead: new Histogram({
      name: 'gateway_overhead_seconds',
      help: "The gateway's own processing time per inference request, upstream time excluded.",
      labelNames: ['endpoint'] as const,
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1],
      registers: [registry],
    }),
    upstreamLatency: new Histogram({
      name: 'gateway_upstream_duration_seconds',
      help: 'Upstream call duration until the response (or first byte of a stream).',
      labelNames: ['provider'] as const,
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120],
      registers: [registry],
    }),
  };
}
export type Metrics = ReturnType<typeof createMetrics>;
