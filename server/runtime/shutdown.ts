// How one gateway process stops: its timings, read once from the environment, and the drain state
// the parts serving requests consult while it stops (decision 0029). The HTTP side of the drain is
// server/http/graceful-close.ts; the order of the whole stop is main.ts's.
import { StartupError } from './data-dir.ts';

export type ShutdownTimings = {
  /** SHUTDOWN_DELAY_MS: between the signal and closing the listener, /readyz answers 503 and everything else is served. */
  delayMs: number;
  /** SHUTDOWN_TIMEOUT_MS: how long in-flight requests and streams get to finish once the listener is closed. */
  timeoutMs: number;
  /** After the bound: for the error events ending streams to reach their clients, then connections are cut. */
  graceMs: number;
  /** After the HTTP drain: for the stores to flush (ledger, settlements, leases), then the process exits regardless. */
  storesMs: number;
};

export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 30_000;

function envMs(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new StartupError(`${name} must be a whole number of milliseconds (0 or more), not '${env[name]}'.`);
  return n;
}

export function shutdownTimings(env: NodeJS.ProcessEnv): ShutdownTimings {
  return {
    delayMs: envMs(env, 'SHUTDOWN_DELAY_MS', 0),
    timeoutMs: envMs(env, 'SHUTDOWN_TIMEOUT_MS', DEFAULT_SHUTDOWN_TIMEOUT_MS),
    graceMs: 2_000,
    storesMs: 10_000,
  };
}

/**
 * SIGTERM and SIGINT call `stop` once. The same signal delivered twice at once (npm or `timeout`
 * passing it on while Ctrl-C also reaches the whole process group) is one stop, not an operator
 * insisting; a signal 2 s or more after the first calls `force`. Returns what removes the handlers.
 */
export function onStopSignals(stop: (signal: NodeJS.Signals) => void, force: (signal: NodeJS.Signals) => void): () => void {
  let first = 0;
  const on = (signal: NodeJS.Signals) => {
    if (!first) {
      first = Date.now();
      return stop(signal);
    }
    if (Date.now() - first >= 2_000) force(signal);
  };
  process.on('SIGTERM', on);
  process.on('SIGINT', on);
  return () => {
    process.off('SIGTERM', on);
    process.off('SIGINT', on);
  };
}

/** The longest a stop may take before the process is ended anyway (and a primary kills a worker). */
export const hardLimitMs = (t: ShutdownTimings) => t.delayMs + t.timeoutMs + t.graceMs + t.storesMs;

/**
 * The draining state of one gateway: /readyz reads it, answers take `Connection: close` while it
 * holds, and the streams still open at the bound are ended through it. A stream registers an ender
 * (a Set insert, nothing per frame); a plain request registers nothing.
 */
export class Drain {
  private state: 'serving' | 'draining' = 'serving';
  private readonly enders = new Set<() => void>();

  get draining(): boolean {
    return this.state === 'draining';
  }

  /** Streams open now (what the bound would end). */
  get openStreams(): number {
    return this.enders.size;
  }

  begin(): void {
    this.state = 'draining';
  }

  /** `end` is called if the stream is still open at the bound; the returned function unregisters it. */
  holdStream(end: () => void): () => void {
    this.enders.add(end);
    return () => void this.enders.delete(end);
  }

  /** The bound is reached: every open stream is told to end (with its format's error event). How many were. */
  endStreams(): number {
    const n = this.enders.size;
    for (const end of [...this.enders]) end();
    this.enders.clear();
    return n;
  }
}
