// Whether an address is this machine's own (loopback): the listen address decides who can reach the
// gateway at all (HOST), the client address who may create its first account without the admin token.
import ipaddr from 'ipaddr.js';

/** 127.0.0.0/8, ::1, and IPv4 loopback written as IPv6 (::ffff:127.0.0.1). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const bare = address.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  if (!ipaddr.isValid(bare)) return false;
  return ipaddr.process(bare).range() === 'loopback';
}

/** Whether listening on `host` (HOST; default 0.0.0.0) keeps the gateway to this machine. */
export function loopbackOnlyHost(host: string | undefined): boolean {
  const h = (host ?? '0.0.0.0').trim().toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || isLoopbackAddress(h);
}

/** Whether a Host header names this machine's loopback (`localhost:8080`, `127.0.0.1`, `[::1]:8080`): not a name DNS could point elsewhere. */
export function loopbackHostHeader(host: string | undefined): boolean {
  if (!host) return false;
  const h = host.trim();
  const name = h.startsWith('[') ? h.slice(1, h.indexOf(']')) : h.replace(/:\d+$/, '');
  return loopbackOnlyHost(name);
}
