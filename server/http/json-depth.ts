// The nesting limit of JSON bodies (contract MAX_JSON_DEPTH), checked on the raw text before it
// is parsed: the gateway's own walks over a body (estimates, translation, serialising) recurse, and
// a body nested thousands deep must be a 400 naming the field, not a stack overflow.
import { paramPath } from '../runtime/errors.ts';

/** Whether `[`/`{` nest deeper than `max` anywhere in `text` (strings skipped). */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // a backslash escapes the next character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

type Frame = { value: unknown; depth: number; parent: Frame | null; key: PropertyKey };

/** The path of the first container nested deeper than `max`, found without recursion. */
export function deepestPath(value: unknown, max: number): string | null {
  const stack: Frame[] = [{ value, depth: 0, parent: null, key: '' }];
  while (stack.length) {
    const f = stack.pop()!;
    if (f.value === null || typeof f.value !== 'object') continue;
    if (f.depth + 1 > max) {
      const path: PropertyKey[] = [];
      for (let p: Frame | null = f; p?.parent; p = p.parent) path.unshift(p.key);
      return paramPath(path);
    }
    const entries: [PropertyKey, unknown][] = Array.isArray(f.value) ? f.value.map((v, i) => [i, v]) : Object.entries(f.value);
    for (const [key, v] of entries) stack.push({ value: v, depth: f.depth + 1, parent: f, key });
  }
  return null;
}
