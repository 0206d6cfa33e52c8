// A request's URL as the gateway records it (log lines, the request log, spans): credentials
// replaced, however the client spelled them, and bounded. A client writes a path and a query in
// many ways the router reads as one (`/v1/%66iles/…` is `/v1/files/…`), and a credential may come in
// a parameter the gateway does not even accept (`?KEY=…`, `?key[]=…`): what is redacted is decided on
// the decoded, normalised form, and on the value's shape as well as its name.
import { contract } from '../../contract/index.ts';
import { redactHeldSecrets } from '../runtime/held-secrets.ts';

/** Longest URL kept in a record: far above any real path, far below what the headers limit lets in. */
export const MAX_RECORDED_URL = 2048;

/** Paths whose last segment is itself a credential: a hosted file's signed token is a download link. */
const SECRET_PATH_PREFIXES = [contract.metadata.hostedFile.path.replace(/:token$/, '')];

/** A parameter's name, normalised: `KEY`, `key[]`, `key[0]` are `key`. */
const paramName = (name: string) => {
  const bracket = name.indexOf('[');
  return (bracket < 0 ? name : name.slice(0, bracket)).trim().toLowerCase();
};

// Names that carry a secret somewhere: authorization codes and states (the gateway's own callbacks
// from identity providers, the apps' authorize requests), tokens, client secrets, passwords, keys,
// signatures; and any name that says it is one.
const SECRET_PARAMS = new Set(['code', 'state', 'code_verifier', 'sig', 'signature']);
const SECRET_NAME = /key|token|secret|passw|credential|auth/;
/** A value shaped like an API key of this gateway or a vendor, whatever the parameter is called. */
const KEY_VALUE = /(?:^|[^A-Za-z0-9])(?:mg|sk|rk|pk|gsk|hf|ghp|glpat)[-_][A-Za-z0-9_-]{12,}|AIza[0-9A-Za-z_-]{20,}/;

const isSecretParam = (name: string, value: string) => {
  const n = paramName(name);
  return SECRET_PARAMS.has(n) || SECRET_NAME.test(n) || KEY_VALUE.test(value);
};

/** The path as the router reads it: percent-decoded (tolerantly), slashes collapsed, lower case (for matching only). */
export function normalisedPath(path: string): string {
  let p = path;
  if (p.includes('%')) {
    try {
      p = decodeURIComponent(p);
    } catch {
      p = p.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    }
  }
  return p.replace(/\/{2,}/g, '/').toLowerCase();
}

/** The prefix of a path whose rest is a credential (a hosted file's link), or null. */
function secretPathPrefix(path: string): string | null {
  const p = normalisedPath(path);
  return SECRET_PATH_PREFIXES.find((prefix) => p.startsWith(prefix) && p.length > prefix.length) ?? null;
}

const bounded = (s: string) => (s.length > MAX_RECORDED_URL ? `${s.slice(0, MAX_RECORDED_URL)}…` : s);

/**
 * `path` (no query) as recorded (the request log, spans): a credential segment replaced (`secret`:
 * it was one), a held secret by value, at most MAX_RECORDED_URL characters. Worked out once a request.
 */
export function recordPath(path: string): { path: string; secret: boolean } {
  const prefix = secretPathPrefix(path);
  return prefix ? { path: `${prefix}redacted`, secret: true } : { path: bounded(redactHeldSecrets(path)), secret: false };
}

export const recordedPath = (path: string) => recordPath(path).path;

/**
 * `url` as a log line writes it: secret path segments and the values of secret-bearing query
 * parameters replaced, also inside `next`. (Held secrets by value: the logger's own stream does
 * that for the whole line.) `recorded`: the path's `recordPath`, when the request has it already.
 */
export function redactUrl(url: string, recorded?: string): string {
  const q = url.indexOf('?');
  const path = recorded ?? recordPath(q < 0 ? url : url.slice(0, q)).path;
  if (q < 0) return path;
  const params = new URLSearchParams();
  for (const [name, value] of new URLSearchParams(url.slice(q + 1))) {
    params.append(name, isSecretParam(name, value) ? 'redacted' : paramName(name) === 'next' ? redactUrl(value) : value);
  }
  return bounded(`${path}?${params}`);
}
