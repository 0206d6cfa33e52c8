// One JSON type for the whole server: what JSON.parse can return and what JSON.stringify takes
// back unchanged. Bodies read from an upstream are `unknown` until a vendor's wire type names them.

export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject;
export type JsonObject = { [key: string]: JsonValue };

/** A JSON value when it is an object (not an array, not null), else undefined: fields read without a cast. */
export const objectAt = (v: JsonValue | undefined): JsonObject | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? v : undefined);

/** A JSON value when it is a string, else undefined. */
export const stringAt = (v: JsonValue | undefined): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * The one unchecked step from a parsed upstream answer to the vendor's wire type (a provider's
 * `wire.ts`), made right after the HTTP call. Answers are not validated on the hot path (issue 31):
 * the wire types are written from recorded answers, and test/mappings/wire-schemas.ts checks every
 * recording against the same shapes; the decoders still read each field defensively.
 */
export function asWire<T>(parsed: unknown): T {
  return parsed as T;
}
