// The response headers every upstream-backed endpoint sends about how it was served: which
// upstream answered, and what was stripped, ignored or changed for it (the one warnings channel;
// a job stores the same list). Built-in tools a text upstream cannot run keep their own header.
const unprintable = /[^\x20-\x7e]/g;

/** Header values are ASCII: anything else a warning quotes (a client's field name) is escaped, not a 500. */
export const headerSafe = (s: string) => s.replace(unprintable, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

export function gatewayHeaders(upstream: string, warnings: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = { 'x-gateway-upstream': upstream };
  if (warnings.length) headers['x-gateway-warnings'] = headerSafe(warnings.join('; '));
  return headers;
}
