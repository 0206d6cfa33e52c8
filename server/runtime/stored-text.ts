// Text as the database can hold it. PostgreSQL refuses NUL in `text` (and `\u0000` in `jsonb`), and
// a lone UTF-16 surrogate cannot be written as UTF-8; an unbounded string in an indexed column can
// exceed the index's row size. The boundary refuses such values from clients with a 400 naming the
// field (contract/common.ts `storedText`, http/client-request-id.ts); the batch writers (the usage
// ledger, the request log) also pass every string through here, so a value that got past the
// boundary, or came from an upstream (a model name in its answer), costs its record one replaced
// character, never the batch it travels in (decision 0034).

/** NUL, or a surrogate that is not half of a pair. */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

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
