// The field names a zod schema accepts, by path: for "did you mean" on unknown fields, and for the
// test that keeps gateway.config.example.yaml complete.
import type { z } from 'zod';

type Def = { type: string; shape?: Record<string, z.ZodType>; element?: z.ZodType; innerType?: z.ZodType; in?: z.ZodType; options?: z.ZodType[] };
const def = (s: z.ZodType) => (s as unknown as { _zod: { def: Def } })._zod.def;

/** The schema without optional/nullable/default wrappers. */
export function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema;
  for (;;) {
    const d = def(s);
    if (d.innerType) s = d.innerType;
    else if (d.type === 'pipe' && d.in) s = d.in;
    else return s;
  }
}

/** The object fields of a schema: its own, or (a union) those of each option that is an object. */
export function objectShapes(schema: z.ZodType): Record<string, z.ZodType>[] {
  const d = def(unwrap(schema));
  if (d.type === 'object') return [d.shape!];
  if (d.type === 'union') return d.options!.flatMap(objectShapes);
  return [];
}

/** The element schema of an array schema, if it is one. */
export function arrayElement(schema: z.ZodType): z.ZodType | undefined {
  const d = def(unwrap(schema));
  return d.type === 'array' ? d.element : undefined;
}

/** The field names allowed at a path of config values (array indexes step into the element). */
export function keysAt(schema: z.ZodType, at: PropertyKey[]): string[] {
  let current: z.ZodType[] = [schema];
  for (const part of at) {
    current = current.flatMap((s) => (typeof part === 'number' ? (arrayElement(s) ?? []) : objectShapes(s).flatMap((shape) => shape[String(part)] ?? [])));
  }
  return [...new Set(current.flatMap((s) => objectShapes(s).flatMap((shape) => Object.keys(shape))))];
}

/** The closest of `known` to a mistyped name (edit distance at most 2), if any. */
export function closest(name: string, known: readonly string[]): string | undefined {
  const distance = (a: string, b: string) => {
    const row = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      let prev = row[0]!;
      row[0] = i;
      for (let j = 1; j <= b.length; j++) {
        const next = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
        prev = row[j]!;
        row[j] = next;
      }
    }
    return row[b.length]!;
  };
  // Two strings whose lengths differ by more than two are more than two edits apart: only the others
  // are compared, so a long name (a client's 15,000-character model id) costs a length check each.
  const near = known.filter((k) => Math.abs(k.length - name.length) <= 2);
  const scored = near.map((k) => [k, distance(name.toLowerCase(), k)] as const).sort((a, b) => a[1] - b[1]);
  return scored[0] && scored[0][1] <= 2 ? scored[0][0] : undefined;
}
