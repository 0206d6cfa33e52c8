// Several gateway processes on one port (`serve --workers N`, decision 0029): node:cluster's primary
// holds the listening socket and hands each new connection to a worker in turn; every worker runs
// the whole gateway, sharing limits and jobs through Redis and PostgreSQL exactly as instances on
// several machines do. This file is the primary's supervision (start, replace with backoff, give up
// on a crash loop, stop) and the IPC both sides need (readiness, metrics summed over the workers).
// What a worker runs, and the checks made once before forking, are main.ts's.
import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import type { Logger } from 'pino';
import { AggregatorRegistry, type Registry } from 'prom-client';
import { StartupError } from './data-dir.ts';

/** Set in a worker's environment by its primary: the worker's slot, 1..N, kept by its replacements. */
export const WORKER_ENV = 'MODEL_GATEWAY_WORKER';

/** This process's worker slot when it is a worker of `serve --workers N`, else null. */
export function workerSlot(env: NodeJS.ProcessEnv): number | null {
  if (!cluster.isWorker) return null;
  const slot = Number(env[WORKER_ENV]);
  return Number.isInteger(slot) && slot > 0 ? slot : null;
}

const MAX_WORKERS = 256;

/**
 * How many worker processes `serve` runs: `--workers`, else WORKERS, else the machine's cores when
 * both DATABASE_URL and REDIS_URL are set (what several processes need), else 1. More than one is
 * refused without PostgreSQL and Redis, saying why.
 */
export function workerCount(flag: string | undefined, env: NodeJS.ProcessEnv, cores = availableParallelism()): number {
  const [raw, name] = flag !== undefined ? [flag, `--workers ${flag}`] : env.WORKERS?.trim() ? [env.WORKERS.trim(), `WORKERS=${env.WORKERS.trim()}`] : [undefined, ''];
  const shared = Boolean(env.DATABASE_URL && env.REDIS_URL);
  if (raw === undefined) return shared ? cores : 1;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_WORKERS) {
    throw new StartupError(`${name}: the number of worker processes must be a whole number from 1 to ${MAX_WORKERS}.`);
  }
  const n = Number(raw);
  if (n === 1 || shared) return n;
  if (!env.DATABASE_URL) {
    throw new StartupError(
      `${name}: ${n} worker processes need PostgreSQL (DATABASE_URL) and Redis (REDIS_URL). The embedded database can be opened by one process only, ` +
        `and counters kept in each process would let ${n} workers allow ${n} times a plan's limits. Set DATABASE_URL and REDIS_URL, or run one worker (--workers 1).`,
    );
  }
  throw new StartupError(
    `${name}: ${n} worker processes need Redis (REDIS_URL) as well as PostgreSQL: without it each worker counts rate limits, quotas and job slots on its own, ` +
      `so ${n} workers would allow ${n} times a plan's limits. Set REDIS_URL, or run one worker (--workers 1).`,
  );
}

// ---- IPC -----------------------------------------------------------------------------------------
type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;
type ToPrimary = { mg: 'ready'; url: string } | { mg: 'scrape'; id: number } | { mg: 'metrics-json'; id: number; metrics: MetricsJson };
type ToWorker = { mg: 'scraped'; id: number; text: string } | { mg: 'metrics-json?'; id: number };

const isMessage = <T extends { mg: string }>(m: unknown): m is T => typeof m === 'object' && m !== null && typeof (m as { mg?: unknown }).mg === 'string';
const toPrimary = (m: ToPrimary) => process.send?.(m);
const toWorker = (w: Worker, m: ToWorker) => {
  if (w.isConnected()) w.send(m);
};

/** A scrape waits this long for the primary's sum before serving this worker's own metrics. */
const SCRAPE_WAIT_MS = 3_000;
/** The primary waits this long for each worker's metrics; one that does not answer is left out. */
const WORKER_METRICS_WAIT_MS = 2_000;

/**
 * A worker's side of the pool: answers the primary's requests for this worker's metrics, and gives
 * the scrape that asks the primary for the sum over every worker. `ready` tells the primary it serves.
 */
export function joinPool(registry: Registry): { scrape(): Promise<string>; ready(url: string): void } {
  let seq = 0;
  const waiting = new Map<number, (text: string) => void>();
  process.on('message', (m: unknown) => {
    if (!isMessage<ToWorker>(m)) return;
    if (m.mg === 'metrics-json?') {
      void registry.getMetricsAsJSON().then((metrics) => toPrimary({ mg: 'metrics-json', id: m.id, metrics }));
    } else if (m.mg === 'scraped') {
      waiting.get(m.id)?.(m.text);
    }
  });
  return {
    ready: (url) => void toPrimary({ mg: 'ready', url }),
    scrape: async () => {
      const id = ++seq;
      let timer: NodeJS.Timeout | undefined;
      const summed = await new Promise<string | null>((resolve) => {
        waiting.set(id, resolve);
        timer = setTimeout(() => resolve(null), SCRAPE_WAIT_MS);
        toPrimary({ mg: 'scrape', id });
      }).finally(() => {
        clearTimeout(timer);
        waiting.delete(id);
      });
      // The primary did not answer in time (it is stopping, or busy): this worker's own, said so.
      return summed ?? `# the sum over the workers was not available: this worker's metrics only\n${await registry.metrics()}`;
    },
  };
}

// ---- the primary --------------------------------------------------------------------------------
export type PoolOptions = {
  count: number;
  log: Pick<Logger, 'info' | 'warn' | 'error' | 'fatal'>;
  /** How long a worker may take to stop after SIGTERM before it is killed (its own hard limit, and some). */
  stopLimitMs: number;
  /** How many workers serve now, at `url`: told when one starts serving and when one that served exits. */
  onServing?(url: string, serving: number): void;
  /** Workers that exit before they serve, in a row, before the primary gives up (3). */
  maxStartupFailures?: number;
};

type Slot = { n: number; worker: Worker; pid: number; forkedAt: number; ready: boolean; stopping: boolean };

/** Delay before replacing a dead worker: 250 ms, doubling with each other death in the last minute, at most 30 s. */
export const restartDelayMs = (recentDeaths: number) => Math.min(250 * 2 ** Math.max(0, recentDeaths - 1), 30_000);

export class WorkerPool {
  private readonly slots = new Map<number, Slot>();
  private readonly restarts = new Map<number, NodeJS.Timeout>();
  private deaths: number[] = [];
  private startupFailures = 0;
  private stopping = false;
  private exitCode = 0;
  private url: string | null = null;
  private metricsSeq = 0;
  private readonly metricsWaiting = new Map<string, (m: MetricsJson | null) => void>();
  private finish: (code: number) => void = () => {};
  private readonly finished = new Promise<number>((resolve) => (this.finish = resolve));

  constructor(private readonly o: PoolOptions) {}

  /** Forks the workers; resolves with the primary's exit code once every worker has exited after stop() (or a crash loop). */
  run(): Promise<number> {
    for (let n = 1; n <= this.o.count; n++) this.fork(n);
    return this.finished;
  }

  /** Workers serving now. */
  get serving(): number {
    return [...this.slots.values()].filter((s) => s.ready).length;
  }

  /** SIGTERM to every worker (each drains, then exits); killed if one outlives `stopLimitMs`. */
  stop(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (this.stopping) return;
    this.stopping = true;
    for (const t of this.restarts.values()) clearTimeout(t);
    this.restarts.clear();
    if (!this.slots.size) return this.finish(this.exitCode);
    this.o.log.info(`workers: ${signal}: stopping ${this.slots.size} worker(s) gracefully`);
    for (const s of this.slots.values()) this.signal(s, signal);
    const kill = setTimeout(() => {
      for (const s of this.slots.values()) {
        this.o.log.error(`worker ${s.n} (pid ${s.pid}) did not stop within ${this.o.stopLimitMs} ms: killed`);
        this.exitCode = 1;
        s.worker.process.kill('SIGKILL');
      }
    }, this.o.stopLimitMs);
    void this.finished.finally(() => clearTimeout(kill));
  }

  /** Kills every worker at once (a second Ctrl-C): what they serve is cut, their ledgers are replayed at the next start. */
  kill(): void {
    this.stopping = true;
    this.exitCode = 1;
    for (const t of this.restarts.values()) clearTimeout(t);
    this.restarts.clear();
    for (const s of this.slots.values()) {
      s.stopping = true;
      s.worker.process.kill('SIGKILL');
    }
    if (!this.slots.size) this.finish(this.exitCode);
  }

  private signal(s: Slot, signal: NodeJS.Signals) {
    s.stopping = true;
    s.worker.process.kill(signal);
  }

  private fork(n: number) {
    this.restarts.delete(n);
    const worker = cluster.fork({ [WORKER_ENV]: String(n) });
    const slot: Slot = { n, worker, pid: worker.process.pid ?? 0, forkedAt: Date.now(), ready: false, stopping: false };
    this.slots.set(n, slot);
    this.o.log.info({ worker: n, worker_pid: slot.pid }, `worker ${n} (pid ${slot.pid}) starting`);
    worker.on('message', (m: unknown) => {
      if (isMessage<ToPrimary>(m)) this.onMessage(slot, m);
    });
    // IPC trouble with a worker that is going away: its exit says the rest.
    worker.on('error', (err) => this.o.log.warn({ worker: n, err: String(err) }, `worker ${n}: IPC error`));
    worker.on('exit', (code: number | null, signal: string | null) => this.onExit(slot, code, signal));
  }

  private onMessage(slot: Slot, m: ToPrimary) {
    if (m.mg === 'ready') {
      slot.ready = true;
      this.startupFailures = 0;
      this.o.log.info({ worker: slot.n, worker_pid: slot.pid }, `worker ${slot.n} (pid ${slot.pid}) ready in ${Date.now() - slot.forkedAt} ms`);
      this.url = m.url;
      this.o.onServing?.(m.url, this.serving);
      // A worker started during a stop (forked just before it) stops at once.
      if (this.stopping && !slot.stopping) this.signal(slot, 'SIGTERM');
    } else if (m.mg === 'scrape') {
      void this.sumMetrics().then(
        (text) => toWorker(slot.worker, { mg: 'scraped', id: m.id, text }),
        (err: unknown) => this.o.log.warn({ err: String(err) }, 'workers: summing the metrics failed; the scrape gets one worker’s'),
      );
    } else if (m.mg === 'metrics-json') {
      this.metricsWaiting.get(`${slot.n}:${m.id}`)?.(m.metrics);
    }
  }

  /** Every serving worker's metrics summed (prom-client's per-metric aggregators); a worker that does not answer in time is left out. */
  private async sumMetrics(): Promise<string> {
    const id = ++this.metricsSeq;
    const serving = [...this.slots.values()].filter((s) => s.ready && s.worker.isConnected());
    const answers = await Promise.all(
      serving.map((s) => {
        const key = `${s.n}:${id}`;
        let timer: NodeJS.Timeout | undefined;
        return new Promise<MetricsJson | null>((resolve) => {
          this.metricsWaiting.set(key, resolve);
          timer = setTimeout(() => resolve(null), WORKER_METRICS_WAIT_MS);
          toWorker(s.worker, { mg: 'metrics-json?', id });
        }).finally(() => {
          clearTimeout(timer);
          this.metricsWaiting.delete(key);
        });
      }),
    );
    return AggregatorRegistry.aggregate(answers.filter((a): a is MetricsJson => a !== null)).metrics();
  }

  private onExit(slot: Slot, code: number | null, signal: string | null) {
    // Defensive: a slot is freed only by the worker holding it.
    if (this.slots.get(slot.n) === slot) this.slots.delete(slot.n);
    if (slot.ready && this.url) this.o.onServing?.(this.url, this.serving);
    const how = signal ? `signal ${signal}` : `code ${code}`;
    if (this.stopping || slot.stopping) {
      if (code !== 0) this.exitCode = 1;
      this.o.log.info({ worker: slot.n, worker_pid: slot.pid }, `worker ${slot.n} (pid ${slot.pid}) stopped (${how})`);
      if (this.stopping && !this.slots.size) this.finish(this.exitCode);
      return;
    }
    const now = Date.now();
    this.deaths = [...this.deaths.filter((t) => now - t < 60_000), now];
    if (!slot.ready) this.startupFailures++;
    const max = this.o.maxStartupFailures ?? 3;
    if (this.startupFailures >= max) {
      this.o.log.fatal(
        { worker: slot.n, worker_pid: slot.pid },
        `worker ${slot.n} (pid ${slot.pid}) exited before serving (${how}): ${this.startupFailures} workers in a row failed at start-up, so no new one is started; stopping (their log lines above say why)`,
      );
      this.exitCode = 1;
      this.stop();
      return;
    }
    const delay = restartDelayMs(this.deaths.length);
    this.o.log.error(
      { worker: slot.n, worker_pid: slot.pid, code, signal },
      `worker ${slot.n} (pid ${slot.pid}) exited unexpectedly (${how}${slot.ready ? '' : ', before serving'}); a new worker ${slot.n} starts in ${delay} ms`,
    );
    this.restarts.set(
      slot.n,
      setTimeout(() => this.fork(slot.n), delay),
    );
  }
}
