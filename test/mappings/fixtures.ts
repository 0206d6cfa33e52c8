// Recorded provider answers for the mapping tests: the files they read, copied with their paths
// into test/fixtures/recorded/upstreams/ (provenance in test/fixtures/recorded/README.md: which
// files are real recordings and which were hand-edited; only real ones are used here).
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { fileURLToPath } from 'node:url';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import * as C from '../../server/translate/canonical.ts';
import type { CallContext, StreamDecoder } from '../../server/providers/types.ts';
import { ProviderConfig } from '../../server/config/schema.ts';

export const FIXTURES = fileURLToPath(new URL('../fixtures/recorded/upstreams/', import.meta.url));

/** vercel/ai's `__fixtures__` folders, by package (`openai/src/chat/__fixtures__/openai-text.json`). */
export const VERCEL = 'vercel+ai/packages/';
/** FirebaseExtended/vertexai-sdk-test-data's mock responses (`googleai/unary-success-basic-reply-short.json`). */
export const FIREBASE = 'FirebaseExtended+vertexai-sdk-test-data/mock-responses/';

export const fixtureText = (rel: string): string => readFileSync(path.join(FIXTURES, rel), 'utf8');

/** A recorded answer, as the wire type the caller names (unchecked, as the gateway takes answers: wire-schemas.test.ts checks them). */
export const fixtureJson = <T = unknown>(rel: string): T => JSON.parse(fixtureText(rel));

/** A vercel/ai `*.chunks.txt`: one SSE `data:` payload per line (`data: `, `event:` lines and `[DONE]` were stripped). */
export const chunkLines = (rel: string): string[] => fixtureText(rel).split('\n').filter((l) => l.trim() !== '');

/**
 * A raw SSE body (`data: …` + blank line), framed the way the gateway frames upstream streams
 * (upstream/http.ts readEvents: a blank line is fed at the end, so a last event without one counts).
 */
export function sseEvents(rel: string): EventSourceMessage[] {
  const out: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (e) => out.push(e) });
  parser.feed(fixtureText(rel) + '\n\n');
  return out;
}

/** Every file under a fixture folder, relative to FIXTURES. */
export function fixtureFiles(dir: string): string[] {
  const root = path.join(FIXTURES, dir);
  const walk = (d: string): string[] => readdirSync(d).flatMap((n) => (statSync(path.join(d, n)).isDirectory() ? walk(path.join(d, n)) : [path.join(d, n)]));
  return walk(root)
    .map((f) => path.relative(FIXTURES, f))
    .sort();
}

/** A stream's payloads through a decoder, as the engine feeds them, then its end. */
export function decodeStream(decoder: StreamDecoder, payloads: readonly string[]): C.StreamEvent[] {
  const out: C.StreamEvent[] = [];
  for (const data of payloads) out.push(...decoder.push({ data }));
  out.push(...decoder.end());
  return out;
}

/** Canonical events collected into the response a client format would encode. */
export function accumulate(events: readonly C.StreamEvent[]): C.Response & { failure: C.ResponseAccumulator['failure'] } {
  const acc = new C.ResponseAccumulator();
  for (const e of events) acc.push(e);
  return { ...acc.response(), failure: acc.failure };
}

/** The text of the events of one kind, joined. */
export const joined = (events: readonly C.StreamEvent[], type: 'text' | 'reasoning'): string =>
  events.map((e) => (e.type === type ? e.text : '')).join('');

/** The value at a path of keys and indexes inside parsed JSON (fixtures are read as `unknown`). */
export function at(value: unknown, ...keys: (string | number)[]): unknown {
  let v = value;
  for (const k of keys) {
    if (typeof k === 'number') v = Array.isArray(v) ? v[k] : undefined;
    else v = v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>)[k] : undefined;
  }
  return v;
}

/** The string at a path inside parsed JSON; throws when the fixture has none there. */
export function atString(value: unknown, ...keys: (string | number)[]): string {
  const v = at(value, ...keys);
  if (typeof v !== 'string') throw new Error(`fixture has no string at ${keys.join('.')}`);
  return v;
}

/** The per-call facts a wire format's body builder reads, for a provider of `type`. */
export function callContext(type: ProviderConfig['type'], defaultMaxTokens?: number): CallContext {
  return { provider: ProviderConfig.parse({ id: `${type}-test`, type }), clientHeaders: {}, ...(defaultMaxTokens !== undefined ? { defaultMaxTokens } : {}) };
}

/** A canonical request with what routing always sets; `over` adds the fields under test. */
export const request = (over: Partial<C.Request> = {}): C.Request => ({ model: 'up-model', system: [], messages: [], stream: false, ...over });

/** What `fn` throws (undefined when it returns). */
export function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
}

/** The data of each event of an SSE body a client format's encoder wrote, checking each event's name is its data's `type`. */
export function namedEvents(sse: string): unknown[] {
  return sse
    .split('\n\n')
    .filter((f) => f !== '')
    .map((f) => {
      const m = /^event: (.+)\ndata: (.+)$/s.exec(f);
      if (!m) throw new Error(`not an SSE event: ${f}`);
      const data: unknown = JSON.parse(m[2]!);
      expect(at(data, 'type')).toBe(m[1]);
      return data;
    });
}
