// The HTTP side of a graceful stop (decision 0029). Every request that reaches this process is
// served, never refused with a 503: a proxy does not retry a POST it has already sent. What turns
// the traffic away is the closed listener (new connections are refused, which any proxy retries on
// another instance), /readyz answering 503 (for balancers that route by health checks), and
// `Connection: close` on every answer while draining (the client's next request opens a new
// connection, which reaches another instance).
//
// Keep-alive connections are where requests get lost: a server closing an idle connection races
// with a client sending a request on it (the request is lost, and a proxy fails a POST lost that
// way rather than retry it). So no idle connection is closed at the signal: they stay usable while
// requests keep coming (each reuse is served, then closed by `Connection: close`), which is how a
// busy proxy gives its pooled connections back; only the ones nobody uses are closed, and later
// the ones that turn idle (an answer begun before the drain, a stream, carries no `Connection:
// close`). Two races remain that no server can close: a connection it closes as idle the instant a
// client sends on it, and connections still in the kernel's accept queue when the listener closes
// (reset). Neither request was read, so a proxy may safely send it to another instance
// (docs/decisions/0029).
import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Drain, ShutdownTimings } from '../runtime/shutdown.ts';
import { within } from '../runtime/within.ts';

/**
 * How long idle keep-alive connections stay usable once the listener is closed: at most
 * IDLE_GRACE_MS, and no longer than requests keep coming (none for IDLE_QUIET_MS: whoever holds
 * the idle connections is not using them, and closing them now risks nothing). A busy proxy gets
 * the second; a test closing its gateway waits 50 ms.
 */
export const IDLE_GRACE_MS = 1_000;
export const IDLE_QUIET_MS = 50;

/**
 * While draining, answers say `Connection: close` and Node closes the connection after them. A
 * callback hook (no promise per request): one branch per answer. (Ending the connection of a
 * stream begun before the drain right after its last byte was tried and is worse: a proxy reuses
 * the connection for its next request before that end reaches it.)
 */
export function closeConnectionsWhileDraining(app: FastifyInstance, drain: Drain): void {
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (drain.draining && !reply.raw.headersSent) reply.header('connection', 'close');
    done(null, payload);
  });
}

export type DrainReport = {
  /** From closing the listener to the last connection closed. */
  ms: number;
  /** Connections open (busy or idle) when the listener closed. */
  connections: number;
  /** Streams still open at the bound, ended with an error event. */
  streamsEnded: number;
  /** Connections still open after the grace that followed the bound, closed without an answer. */
  cut: boolean;
};

/** Until the connections are all closed, `ms` pass, or no request has come for IDLE_QUIET_MS. The listener only while it lasts: no cost per request otherwise. */
async function idleGrace(server: FastifyInstance['server'], drained: Promise<void>, ms: number): Promise<void> {
  let last = performance.now();
  const onRequest = () => void (last = performance.now());
  server.on('request', onRequest);
  const started = last;
  let done = false;
  void drained.then(() => (done = true));
  try {
    while (!done && performance.now() - started < ms && performance.now() - last < IDLE_QUIET_MS) await new Promise((resolve) => setTimeout(resolve, 10));
  } finally {
    server.off('request', onRequest);
  }
}

const connectionCount = (server: net.Server) => new Promise<number>((resolve) => server.getConnections((err, n) => resolve(err ? -1 : n)));

/**
 * Drains the server: after `delayMs` (readiness already 503), closes the listener, keeps idle
 * connections usable for IDLE_GRACE_MS, lets in-flight requests and streams finish for up to
 * `timeoutMs` from the listener's close, then ends the streams still open with an error event in
 * their format, and after `graceMs` more cuts what is left (a plain request still waiting on its
 * upstream: no answer can be made up for it). Fastify's own close (its hooks) follows.
 */
export async function drainHttp(app: FastifyInstance, drain: Drain, t: ShutdownTimings, log: Pick<Logger, 'info' | 'warn'>): Promise<DrainReport> {
  drain.begin();
  if (t.delayMs > 0) {
    log.info(`draining: /readyz answers 503; the listener closes in ${t.delayMs} ms (SHUTDOWN_DELAY_MS)`);
    await new Promise((resolve) => setTimeout(resolve, t.delayMs));
  }
  const server = app.server;
  const connections = await connectionCount(server);
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  // Emitted once the listener is closed and the last connection has ended.
  const drained = new Promise<void>((resolve) => server.once('close', () => resolve()));
  // net.Server's close, not http.Server's: the latter would also drop the idle keep-alive
  // connections at once. In a cluster worker this also tells the primary to send it no more.
  net.Server.prototype.close.call(server);
  log.info(`draining: listener closed; ${connections} connection(s) open, ${drain.openStreams} stream(s) in flight; up to ${t.timeoutMs} ms (SHUTDOWN_TIMEOUT_MS) for them to finish`);
  await idleGrace(server, drained, Math.min(IDLE_GRACE_MS, t.timeoutMs));
  // Fastify's close: http.Server's (the idle connections now go), then its hooks once the rest end.
  const closed = app.close();
  // Connections whose answer began before the drain without `Connection: close` (a plain answer
  // sent just before) turn idle later: closed as they do, or the server would wait for their
  // keep-alive time-out.
  const reaper = setInterval(() => server.closeIdleConnections(), 100);
  let streamsEnded = 0;
  let cut = false;
  try {
    if (!(await within(closed, t.timeoutMs - elapsed()))) {
      streamsEnded = drain.endStreams();
      log.warn(`draining: SHUTDOWN_TIMEOUT_MS (${t.timeoutMs} ms) reached: ${streamsEnded} stream(s) ended with a server_shutting_down error event`);
      if (!(await within(closed, t.graceMs))) {
        cut = true;
        const left = await connectionCount(server);
        log.warn(`draining: ${left} connection(s) still open ${t.graceMs} ms after the bound (requests waiting on their upstream, or clients not reading): closed`);
        server.closeAllConnections();
      }
    }
    await closed;
  } finally {
    clearInterval(reaper);
  }
  return { ms: Math.round(elapsed()), connections, streamsEnded, cut };
}
