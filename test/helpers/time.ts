import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Waits, when needed, until at least `seconds` remain in the current UTC minute. A test whose
 * requests and later reads of per-minute and per-day counters must fall in one window (the
 * gateway runs on the real clock there) calls it first; a day ends on a minute's edge, so this
 * keeps the day too.
 */
export async function clearOfMinuteEdge(seconds = 20): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < seconds * 1000) await sleep(left + 250);
}
