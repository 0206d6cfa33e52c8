// A TCP proxy the tests can cut: put it between the gateway and Redis or PostgreSQL to play an
// outage. `refuse` closes new connections at once (a server that is down), `drop` destroys the open
// ones (a restart), `stall` keeps every socket open but forwards nothing (a hung server, a network
// black hole: bytes are held, not lost), `resume` ends all of that and delivers what was held.
import net from 'node:net';

type Pair = { client: net.Socket; upstream: net.Socket; held: { toUpstream: Buffer[]; toClient: Buffer[] } };

export type TcpProxy = {
  /** `127.0.0.1:<port>` */
  host: string;
  port: number;
  /** The target's URL with the proxy's host and port. */
  url(targetUrl: string): string;
  refuse(): void;
  drop(): void;
  stall(): void;
  resume(): void;
  /** Connections open now. */
  readonly open: number;
  close(): Promise<void>;
};

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  let refusing = false;
  let stalled = false;

  const flush = (p: Pair) => {
    for (const b of p.held.toUpstream.splice(0)) p.upstream.write(b);
    for (const b of p.held.toClient.splice(0)) p.client.write(b);
  };

  const drop = () => {
    for (const p of pairs) {
      p.client.destroy();
      p.upstream.destroy();
    }
    pairs.clear();
  };

  const server = net.createServer((client) => {
    if (refusing) {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(target.port, target.host);
    const pair: Pair = { client, upstream, held: { toUpstream: [], toClient: [] } };
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (b) => (stalled ? pair.held.toUpstream.push(b) : upstream.write(b)));
    upstream.on('data', (b) => (stalled ? pair.held.toClient.push(b) : client.write(b)));
    for (const s of [client, upstream]) {
      s.on('error', end);
      s.on('close', end);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;

  return {
    host: '127.0.0.1',
    port,
    url(targetUrl) {
      const u = new URL(targetUrl);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    refuse() {
      refusing = true;
    },
    drop,
    stall() {
      stalled = true;
    },
    resume() {
      refusing = false;
      stalled = false;
      for (const p of pairs) flush(p);
    },
    get open() {
      return pairs.size;
    },
    async close() {
      drop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
