import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/** How long, and how much, of a refused body is read and thrown away after the answer. */
export const LINGER = { ms: 2_000, bytes: 8 * 1024 * 1024 };

/**
 * A refusal that closes the connection while the client is still sending its body (an upload past
 * its bound, a form refused part-way) would make the kernel answer the unread bytes with a reset;
 * a reset can reach the client before it has read the answer, and it then sees a dropped connection
 * instead of the 413. So, as nginx and Apache do ("lingering close"): the answer goes out, the
 * write side is shut (the client reads the answer and an end), and what the client still sends is
 * read and dropped for at most LINGER.ms or LINGER.bytes; then the socket closes. Nothing of it
 * reaches a parser or a route.
 *
 * Call it before the answer is sent. Node's server ends a `Connection: close` answer with the
 * socket's `destroySoon()`; this socket's own one shuts the write side and lingers instead.
 */
export function lingerAfterAnswer(request: IncomingMessage): void {
  const socket = request.socket as Socket | null;
  if (!socket || socket.destroyed || request.complete) return;
  socket.destroySoon = () => {
    let dropped = 0;
    const close = () => socket.destroy();
    const timer = setTimeout(close, LINGER.ms);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
    request.removeAllListeners('data');
    request.on('data', (chunk: Buffer) => {
      dropped += chunk.length;
      if (dropped > LINGER.bytes) close();
    });
    // The body ended while lingering: nothing more to wait for.
    request.once('end', close);
    request.resume();
    socket.end();
  };
}
