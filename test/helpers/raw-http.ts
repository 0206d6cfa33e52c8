// HTTP/1.1 by hand over a socket, for requests no client library would send: bodies cut short,
// clients that vanish mid-upload, bodies that never end.
import { connect } from 'node:net';

export type RawAnswer = {
  /** Null when nothing came back before the socket closed or the time ran out. */
  status: number | null;
  headers: Record<string, string>;
  body: string;
  /** The server closed the connection (rather than the time running out with it open). */
  closed: boolean;
  /** The connection ended in an error (a reset) rather than an orderly end. */
  reset: boolean;
  /** Milliseconds until the answer's first byte (or the end). */
  ms: number;
  /** Body bytes the socket had accepted when the answer began. */
  written: number;
};

/**
 * Sends `head` (request line and headers, without the blank line) and then `body`, in chunks of
 * `chunk` bytes, and reads the answer until the server closes the connection or `timeoutMs`
 * passes. `destroyAfter`: the client itself vanishes after sending that many body bytes.
 * `keepSending`: after `body`, goes on offering that chunk until the server answers (a body that
 * never ends).
 */
export function rawRequest(
  url: string,
  head: string,
  body: Buffer,
  opts: { chunk?: number; destroyAfter?: number; keepSending?: Buffer; timeoutMs?: number } = {},
): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let response = Buffer.alloc(0);
    let written = 0;
    let writtenAtAnswer = -1;
    let ended = false;
    const finish = (closed: boolean, reset = false) => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      socket.destroy();
      const text = response.toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const lines = (split < 0 ? text : text.slice(0, split)).split('\r\n');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(lines[0] ?? '');
      const headers: Record<string, string> = {};
      for (const l of lines.slice(1)) {
        const i = l.indexOf(':');
        if (i > 0) headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
      }
      resolve({ status: status ? Number(status[1]) : null, headers, body: split < 0 ? '' : text.slice(split + 4), closed, reset, ms: Date.now() - started, written: writtenAtAnswer < 0 ? written : writtenAtAnswer });
    };
    const timer = setTimeout(() => finish(false), opts.timeoutMs ?? 5_000);
    socket.on('error', () => finish(true, true));
    socket.on('data', (d: Buffer) => {
      if (writtenAtAnswer < 0) writtenAtAnswer = written;
      response = Buffer.concat([response, d]);
      // A whole answer on a connection the server keeps: done. One it says it closes: wait for the close.
      const split = response.indexOf('\r\n\r\n');
      if (split < 0) return;
      const headText = response.subarray(0, split).toString('latin1');
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(headText);
      if (length && response.length >= split + 4 + Number(length[1]) && !/\r\nconnection:\s*close/i.test(headText)) finish(false);
    });
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('connect', () => void (async () => {
      socket.write(`${head}\r\n\r\n`);
      const chunk = opts.chunk ?? 64 * 1024;
      const limit = opts.destroyAfter ?? body.length;
      for (let i = 0; i < limit && !ended; i += chunk) {
        const part = body.subarray(i, Math.min(i + chunk, limit));
        written += part.length;
        if (!socket.write(part)) await new Promise((r) => socket.once('drain', r));
      }
      if (opts.destroyAfter !== undefined) {
        // Give the bytes a moment to leave, then vanish without a FIN's orderly end.
        setTimeout(() => {
          socket.resetAndDestroy();
          finish(false);
        }, 50);
        return;
      }
      while (opts.keepSending && !ended && writtenAtAnswer < 0) {
        written += opts.keepSending.length;
        if (!socket.write(opts.keepSending)) await new Promise((r) => socket.once('drain', r));
      }
    })());
  });
}
