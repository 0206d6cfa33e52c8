// The time a request spends waiting on upstreams: each attempt from sending to the last byte of
// the answer (to the first event, for a stream), failed attempts and backoff included. Whatever
// else the request took is the gateway's own (X-Gateway-Overhead-Ms).
export class UpstreamClock {
  waitedMs = 0;

  async wait<T>(step: Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await step;
    } finally {
      this.waitedMs += performance.now() - started;
    }
  }

  /** For failover's `onBackoff`: a pause before the next attempt is waiting on upstreams too. */
  readonly paused = (ms: number) => {
    this.waitedMs += ms;
  };
}
