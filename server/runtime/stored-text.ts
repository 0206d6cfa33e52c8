// Text as the database can hold it. PostgreSQL refuses NUL in `text` (and `\u0000` in `jsonb`), and
// a lone UTF-16 surrogate cannot be written as UTF-8; an unbounded string in an indexed column can
// exceed the index's row size. The boundary refuses such values from clients with a 400 naming the
// field (contract/common.ts `storedText`, http/client-request-id.ts); the batch writers (the usage
// ledger, the request log) also pass every string through here, so a value that got past the
// boundary, or came from an upstream (a model name in its answer), costs its record one replaced
// character, never the batch it travels in (decision 0034).

import { LONE_SURROGATE } from '../../contract/common.ts';

/** The longest id or code (the gateway's own), and name (the catalog's, an upstream's), a record keeps. */
export const STORED_ID_MAX = 128;
export const STORED_NAME_MAX = 256;

/** NUL, or a surrogate that is not half of a pair. */
const UNSTORABLE = new RegExp(`\\u0000|${LONE_SURROGATE.source}`, 'g');

/** Whether `s` can be stored as it is: at most `max` characters, no NUL, well-formed. */
export const isStorable = (s: string, max: number) => s.length <= max && !s.includes('\u0000') && s.isWellFormed();

/** `s` as the database can hold it: NUL and lone surrogates replaced by U+FFFD, cut at `max` characters (with `…`). */
export function storable(s: string, max: number): string {
  if (isStorable(s, max)) return s;
  let out = s.replace(UNSTORABLE, '\uFFFD');
  if (out.length > max) {
    // Not between the two halves of a pair.
    let end = max - 1;
    if (end > 0 && /[\uD800-\uDBFF]/.test(out[end - 1]!)) end--;
    out = `${out.slice(0, end)}…`;
  }
  return out;
}

/** `storable` for a column that may be null. */
export const storableOrNull = (s: string | null | undefined, max: number): string | null => (s === null || s === undefined ? null : storable(s, max));

/** A string a JSON column cannot hold: `jsonb` refuses `\u0000`, UTF-8 a lone surrogate. */
const UNSTORABLE_CHAR = new RegExp(UNSTORABLE.source);

/**
 * The path (`prompt`, `input[0].text`) of the first string in `value` — a member's name or a
 * value — that a JSON column cannot hold, or null when there is none: a client's body stored as it
 * came (a job's request) is checked with it, so the field is named in a 400 rather than failing
 * the insert.
 */
export function unstorablePath(value: unknown, path = ''): string | null {
  if (typeof value === 'string') return UNSTORABLE_CHAR.test(value) ? path || '(body)' : null;
  if (!value || typeof value !== 'object') return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unstorablePath(value[i], `${path}[${i}]`);
      if (found !== null) return found;
    }
    return null;
  }
  for (const [k, v] of Object.entries(value)) {
    const at = path ? `${path}.${k}` : k;
    if (UNSTORABLE_CHAR.test(k)) return at;
    const found = unstorablePath(v, at);
    if (found !== null) return found;
  }
  return null;
}
