// The origin of the absolute links the gateway hands out in API answers (hosted copies of generated
// files in image answers and jobs). Whoever sends a request chooses its Host header, so a link built
// from it would point wherever the sender likes (`Host: evil.example` → a victim's client fetching
// its image from evil.example). The origin is `public_url`; else, behind a proxy trust_proxy trusts,
// the X-Forwarded-Host/-Proto it sets (as for the OAuth issuer); else the gateway's own address.
import { TLSSocket } from 'node:tls';
import type { FastifyRequest } from 'fastify';
import proxyAddr from '@fastify/proxy-addr';
import ipaddr from 'ipaddr.js';
import type { TrustProxy } from '../config/schema.ts';
import type { LinkBaseDeps } from '../accounts/passwords.ts';
import type { ResolvedConfig } from '../config/schema.ts';

const compiled = new WeakMap<string[], (address: string, hop: number) => boolean>();

/**
 * Whether the peer at `address` is a proxy whose forwarded headers trust_proxy believes: the same
 * answer Fastify's trustProxy gives for the nearest hop (a hop count trusts it whatever its
 * address), by the same library Fastify asks (proxy-addr, with its named ranges).
 */
export function trustsPeer(trustProxy: TrustProxy, address: string | undefined): boolean {
  if (typeof trustProxy === 'boolean') return trustProxy;
  if (typeof trustProxy === 'number') return trustProxy > 0;
  if (!address || !ipaddr.isValid(address)) return false;
  let trust = compiled.get(trustProxy);
  if (!trust) compiled.set(trustProxy, (trust = proxyAddr.compile(trustProxy)));
  return trust(address, 0);
}

/** `host` as it goes in a URL: an IPv6 address in brackets, an IPv4-mapped one as plain IPv4. */
function urlHost(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv4') return ip.toString();
  const v6 = ip as ipaddr.IPv6;
  return v6.isIPv4MappedAddress() ? v6.toIPv4Address().toString() : `[${v6.toString()}]`;
}

/**
 * The origin for links in the answer to `request`: public_url; else a trusted proxy's forwarded
 * host and protocol; else the address of this gateway the client connected to (the one it listens
 * on, or for a wildcard listener the interface the connection came in on), never the Host header.
 */
export function linkOrigin(services: LinkBaseDeps & { config: Pick<ResolvedConfig, 'trustProxy'> }, request: FastifyRequest): string {
  const { publicUrl, trustProxy } = services.config;
  if (publicUrl) return publicUrl;
  // Fastify's request.host is X-Forwarded-Host from a trusted peer and the Host header otherwise:
  // only the former is the operator's word.
  if (request.headers['x-forwarded-host'] && trustsPeer(trustProxy, request.socket?.remoteAddress)) return `${request.protocol}://${request.host}`;
  const local = request.socket?.localAddress;
  const port = request.socket?.localPort;
  if (local && port) return `${request.socket instanceof TLSSocket ? 'https' : 'http'}://${urlHost(local)}:${port}`;
  if (services.listenUrl) return services.listenUrl;
  throw new Error('no address for links: the request has no socket and the gateway is not listening');
}
