// The listening address is checked before the database is opened and migrated (seconds on the
// embedded database), so a taken port is reported at once, with what to do about it.
import net from 'node:net';
import { StartupError } from './data-dir.ts';

/** What a failed listen means for the operator; other errors pass through unchanged. */
export function listenError(err: NodeJS.ErrnoException, host: string, port: number): Error {
  switch (err.code) {
    case 'EADDRINUSE':
      return new StartupError(`PORT ${port} on ${host} is already in use (another gateway, or another program): stop it, or set PORT to a free port.`);
    case 'EACCES':
      return new StartupError(`PORT ${port} on ${host} needs privileges this process lacks (ports below 1024): set PORT to 1024 or above (a reverse proxy can serve 80/443), or grant cap_net_bind_service.`);
    case 'EADDRNOTAVAIL':
      return new StartupError(`HOST ${host} is not an address of this machine: set HOST to one of its addresses, 127.0.0.1, or 0.0.0.0 (all).`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new StartupError(`HOST ${host} cannot be resolved: set HOST to an address of this machine, 127.0.0.1, or 0.0.0.0 (all).`);
    default:
      return err;
  }
}

/**
 * Binds host:port and lets it go again: a taken port fails here, not after the migrations. The
 * real listen follows a few seconds later; a program taking the port in between still gets the
 * same message from it. PORT=0 (any free port) needs no check.
 */
export async function checkListenAddress(host: string, port: number): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (err) => reject(listenError(err as NodeJS.ErrnoException, host, port)));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}
