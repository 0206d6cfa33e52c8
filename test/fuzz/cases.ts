// Requests generated from the OpenAPI document: for every operation, bodies that satisfy its
// schema (json-schema-faker, seeded) and mutations of them, odd path parameters, queries and
// headers. Pure: the same case always builds the same request.
import fc from 'fast-check';
import { generateSync } from 'json-schema-faker';

type Json = Record<string, any>;
export type OpenApiDoc = { paths: Record<string, Record<string, Json>>; components: Json };

export type Operation = {
  id: string;
  method: string;
  /** OpenAPI template, e.g. /v1/apps/{id}. */
  path: string;
  op: Json;
  bodyType: 'application/json' | 'application/x-www-form-urlencoded' | 'multipart/form-data' | null;
  bodySchema: Json | null;
  pathParams: Json[];
  queryParams: Json[];
  security: string[];
};

export function operations(doc: OpenApiDoc): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const content = op.requestBody?.content ?? {};
      const bodyType = content['multipart/form-data']
        ? 'multipart/form-data'
        : content['application/x-www-form-urlencoded']
          ? 'application/x-www-form-urlencoded'
          : content['application/json']
            ? 'application/json'
            : null;
      const params: Json[] = op.parameters ?? [];
      out.push({
        id: op.operationId,
        method: method.toUpperCase(),
        path,
        op,
        bodyType,
        bodySchema: bodyType ? content[bodyType].schema : null,
        pathParams: params.filter((p) => p.in === 'path'),
        queryParams: params.filter((p) => p.in === 'query'),
        security: (op.security ?? []).flatMap((s: Json) => Object.keys(s)),
      });
    }
  }
  return out;
}

export const BODY_MUTATIONS = [
  'valid',
  'valid',
  'valid-known-model',
  'valid-known-model',
  'drop-required',
  'wrong-type',
  'nul-string',
  'long-string',
  'deep-nesting',
  'unknown-field',
  'not-an-object',
  'invalid-json',
  'empty',
  'wrong-content-type',
] as const;
export const PATH_VARIANTS = ['generated', 'generated', 'nul', 'too-long', 'bad-percent', 'unicode'] as const;
export const QUERY_VARIANTS = ['generated', 'generated', 'nul', 'repeated', 'junk', 'none'] as const;
export const AUTH_VARIANTS = ['valid', 'valid', 'valid', 'missing', 'wrong', 'malformed'] as const;
export const HEADER_VARIANTS = ['plain', 'plain', 'plain', 'plain', 'plain', 'plain', 'plain', 'huge-header', 'odd-accept', 'request-id'] as const;

export type Case = {
  seed: number;
  body: (typeof BODY_MUTATIONS)[number];
  path: (typeof PATH_VARIANTS)[number];
  query: (typeof QUERY_VARIANTS)[number];
  auth: (typeof AUTH_VARIANTS)[number];
  header: (typeof HEADER_VARIANTS)[number];
  pick: number;
};

export const caseArbitrary: fc.Arbitrary<Case> = fc.record({
  seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  body: fc.constantFrom(...BODY_MUTATIONS),
  path: fc.constantFrom(...PATH_VARIANTS),
  query: fc.constantFrom(...QUERY_VARIANTS),
  auth: fc.constantFrom(...AUTH_VARIANTS),
  header: fc.constantFrom(...HEADER_VARIANTS),
  pick: fc.nat(),
});

export type Credentials = { apiKey: string; adminToken: string; models: Record<string, string[]> };

export type BuiltRequest = { method: string; url: string; headers: Record<string, string>; body?: string | FormData; expectRouted: boolean; describe: string };

/** Seeded random choices inside one case. */
function rng(seed: number) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]! };
}

function generate(schema: Json, doc: OpenApiDoc, seed: number): unknown {
  return generateSync({ ...schema, components: doc.components } as never, { seed, maxDepth: 4, optionalsProbability: 0.4, maxDefaultItems: 3 } as never);
}

/** Paths to every value inside `v` (for choosing what to mutate). */
function paths(v: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (v && typeof v === 'object') {
    for (const [k, child] of Object.entries(v)) {
      const p = [...prefix, Array.isArray(v) ? Number(k) : k];
      out.push(p);
      paths(child, p, out);
    }
  }
  return out;
}

function setAt(root: Json, path: (string | number)[], value: unknown): void {
  let o: any = root;
  for (const k of path.slice(0, -1)) o = o[k];
  o[path[path.length - 1]!] = value;
}

// Deep values are written as text: serialising them would overflow this test's own stack.
const DEEP = '__deep_placeholder__';
const deepText = (levels: number) => '{"a":['.repeat(levels / 2) + '"bottom"' + ']}'.repeat(levels / 2);

const KNOWN_GOOD: Record<string, Json> = {
  '/v1/chat/completions': { messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'What is the weather in Paris?' }] },
  '/v1/messages': { messages: [{ role: 'user', content: [{ type: 'text', text: 'What is the weather in Paris?' }] }] },
  '/v1/responses': { input: [{ role: 'user', content: 'What is the weather in Paris?' }] },
  '/v1/embeddings': { input: ['one', 'two'] },
  '/v1/moderations': { input: 'a sentence' },
};

/** The model ids a catalog endpoint kind serves, by the operation's path. */
function modelKind(path: string): string | null {
  if (path === '/v1/chat/completions' || path === '/v1/responses') return 'chat';
  if (path === '/v1/messages') return 'messages';
  if (path === '/v1/embeddings') return 'embeddings';
  if (path === '/v1/moderations') return 'moderation';
  return null;
}

function mutateBody(op: Operation, c: Case, doc: OpenApiDoc, creds: Credentials, r: ReturnType<typeof rng>): { body?: string; contentType?: string; what: string } {
  const type = op.bodyType!;
  let value = generate(op.bodySchema!, doc, c.seed) as Json;
  const encode = (v: unknown) => (type === 'application/json' ? JSON.stringify(v) : new URLSearchParams(Object.entries((v ?? {}) as Json).map(([k, x]): [string, string] => [k, typeof x === 'string' ? x : JSON.stringify(x)])).toString());
  const kind = modelKind(op.path);
  if (kind && value && typeof value === 'object' && (c.body === 'valid-known-model' || c.body === 'valid')) {
    const models = creds.models[kind] ?? [];
    // A served model and a conversation the server accepts, so the generated optional fields
    // (tools, formats, sampling, streaming) travel the whole path to the fake upstreams.
    if (c.body === 'valid-known-model' && models.length) value = { ...value, model: models[c.pick % models.length], ...KNOWN_GOOD[op.path] };
  }
  const all = paths(value);
  const strings = all.filter((p) => typeof p.reduce<any>((o, k) => o?.[k], value) === 'string');
  switch (c.body) {
    case 'valid':
    case 'valid-known-model':
      return { body: encode(value), what: c.body };
    case 'drop-required': {
      const required: string[] = op.bodySchema?.required ?? [];
      if (required.length && value && typeof value === 'object') delete value[r.pick(required)];
      return { body: encode(value), what: 'drop-required' };
    }
    case 'wrong-type': {
      if (all.length) {
        const p = r.pick(all);
        const current = p.reduce<any>((o, k) => o?.[k], value);
        setAt(value, p, typeof current === 'string' ? 12345 : typeof current === 'number' ? 'not a number' : Array.isArray(current) ? { not: 'an array' } : typeof current === 'object' ? ['not', 'an', 'object'] : 'wrong');
      }
      return { body: encode(value), what: 'wrong-type' };
    }
    case 'nul-string':
      if (strings.length) setAt(value, r.pick(strings), 'a\u0000b');
      else if (value && typeof value === 'object') value.name = 'a\u0000b';
      return { body: encode(value), what: 'nul-string' };
    case 'long-string':
      if (strings.length) setAt(value, r.pick(strings), 'x'.repeat(100_000));
      return { body: encode(value), what: 'long-string' };
    case 'deep-nesting': {
      const objects = all.filter((p) => {
        const v = p.reduce<any>((o, k) => o?.[k], value);
        return v && typeof v === 'object' && !Array.isArray(v);
      });
      if (objects.length && r.next() < 0.5) setAt(value, [...r.pick(objects), 'deep'], DEEP);
      else if (value && typeof value === 'object') value.deep = DEEP;
      return { body: encode(value).replace(type === 'application/json' ? `"${DEEP}"` : DEEP, deepText(r.pick([3_000, 10_000]))), what: 'deep-nesting' };
    }
    case 'unknown-field':
      if (value && typeof value === 'object') value[`x_unknown_${c.seed % 97}`] = { nested: [1, 'two', null] };
      return { body: encode(value), what: 'unknown-field' };
    case 'not-an-object':
      return { body: type === 'application/json' ? r.pick(['[]', '"text"', '42', 'null', 'true']) : 'just-text', what: 'not-an-object' };
    case 'invalid-json':
      return { body: type === 'application/json' ? r.pick(['{', '{"model": }', '{"a":1}}', "{'single': 1}", '\u0000']) : '%%%=&&=', what: 'invalid-json' };
    case 'empty':
      return { body: '', what: 'empty' };
    case 'wrong-content-type':
      return { body: encode(value), contentType: r.pick(['text/plain', 'application/xml', 'multipart/form-data; boundary=x', 'application/octet-stream']), what: 'wrong-content-type' };
  }
}

// A real RIFF/WAVE header and a few samples: what an upload's content sniffing expects.
function wav(): Uint8Array {
  const b = Buffer.alloc(44 + 64);
  b.write('RIFF', 0);
  b.writeUInt32LE(36 + 64, 4);
  b.write('WAVEfmt ', 8);
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20);
  b.writeUInt16LE(1, 22);
  b.writeUInt32LE(16_000, 24);
  b.writeUInt32LE(32_000, 28);
  b.writeUInt16LE(2, 32);
  b.writeUInt16LE(16, 34);
  b.write('data', 36);
  b.writeUInt32LE(64, 40);
  return new Uint8Array(b);
}

/** Multipart uploads: generated form fields and a file, or one of the ways uploads go wrong. */
function mutateUpload(op: Operation, c: Case, doc: OpenApiDoc, r: ReturnType<typeof rng>): { body?: string | FormData; contentType?: string; what: string } {
  const fields = (generate(op.bodySchema!, doc, c.seed) ?? {}) as Json;
  const form = new FormData();
  const drop = c.body === 'drop-required' ? r.pick((op.bodySchema?.required as string[] | undefined) ?? ['file']) : null;
  for (const [k, v] of Object.entries(fields)) {
    if (k === 'file' || k === drop) continue;
    form.append(k, c.body === 'nul-string' ? 'a\u0000b' : c.body === 'long-string' ? 'x'.repeat(100_000) : typeof v === 'string' ? v : JSON.stringify(v));
  }
  if (drop !== 'file') {
    const file = c.body === 'wrong-type' ? new Blob(['this is not audio'], { type: 'text/plain' }) : new Blob([wav()], { type: 'audio/wav' });
    form.append('file', file, c.body === 'wrong-type' ? 'notes.txt' : 'speech.wav');
  }
  switch (c.body) {
    case 'invalid-json':
      return { body: '--x\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n--x', contentType: 'multipart/form-data; boundary=x', what: 'truncated-multipart' };
    case 'empty':
      return { body: '', contentType: 'multipart/form-data; boundary=x', what: 'empty' };
    case 'not-an-object':
    case 'wrong-content-type':
      return { body: JSON.stringify(fields), contentType: 'application/json', what: 'json-instead-of-multipart' };
    case 'deep-nesting':
      return { body: form, contentType: 'multipart/form-data', what: 'no-boundary' };
    default:
      return { body: form, what: c.body };
  }
}

function pathValue(op: Operation, param: Json, c: Case, doc: OpenApiDoc): { value: string; routed: boolean } {
  switch (c.path) {
    case 'generated':
      return { value: encodeURIComponent(String(generate(param.schema ?? { type: 'string' }, doc, c.seed))), routed: true };
    case 'nul':
      return { value: '%00', routed: true };
    case 'too-long':
      return { value: 'a'.repeat(101), routed: true };
    case 'bad-percent':
      return { value: '%zz', routed: false };
    case 'unicode':
      return { value: encodeURIComponent('ключ-🔑'), routed: true };
  }
}

function queryString(op: Operation, c: Case, doc: OpenApiDoc, r: ReturnType<typeof rng>): string {
  if (!op.queryParams.length || c.query === 'none') return '';
  const q = new URLSearchParams();
  for (const p of op.queryParams) {
    if (!p.required && r.next() < 0.3) continue;
    const v = generate(p.schema ?? { type: 'string' }, doc, c.seed);
    q.append(p.name, typeof v === 'string' ? v : JSON.stringify(v));
  }
  const name = r.pick(op.queryParams).name as string;
  if (c.query === 'nul') q.set(name, 'a\u0000b');
  if (c.query === 'repeated') q.append(name, 'again');
  if (c.query === 'junk') q.set(name, r.pick(['', '-1', '99999999999999999999', '2026-13-45', '../../etc/passwd', '%', ' ']));
  return `?${q}`;
}

export function buildRequest(op: Operation, c: Case, doc: OpenApiDoc, creds: Credentials): BuiltRequest {
  const r = rng(c.seed);
  let routed = true;
  let url = op.path;
  for (const p of op.pathParams) {
    const { value, routed: ok } = pathValue(op, p, c, doc);
    routed &&= ok;
    url = url.replace(`{${p.name}}`, value);
  }
  url += queryString(op, c, doc, r);
  const headers: Record<string, string> = {};
  const secured = op.security.length > 0;
  if (secured && c.auth !== 'missing') {
    const scheme = op.security[0]!;
    const good = scheme === 'admin' ? creds.adminToken : creds.apiKey;
    headers.authorization =
      c.auth === 'valid'
        ? scheme === 'oauthClient'
          ? `Basic ${Buffer.from('mgc_unknown:secret').toString('base64')}`
          : `Bearer ${good}`
        : c.auth === 'wrong'
          ? 'Bearer mg-0000000000000000000000000000000000000000000'
          : r.pick(['Bearer', 'Basic %ZZ', 'Basic ' + Buffer.from('no-colon').toString('base64'), 'Token abc', 'Bearer ' + 'k'.repeat(5000)]);
  }
  if (c.header === 'huge-header') headers['x-padding'] = 'p'.repeat(20_000);
  if (c.header === 'odd-accept') headers.accept = 'application/x-nothing, */*;q=0';
  if (c.header === 'request-id') headers['x-request-id'] = 'r'.repeat(300);
  let body: string | FormData | undefined;
  let what = '';
  if (op.bodyType === 'multipart/form-data') {
    const b = mutateUpload(op, c, doc, r);
    body = b.body;
    what = b.what;
    // FormData sets its own content type with the boundary, unless the case overrides it.
    if (b.contentType) headers['content-type'] = b.contentType;
  } else if (op.bodyType) {
    const b = mutateBody(op, c, doc, creds, r);
    body = b.body;
    what = b.what;
    headers['content-type'] = b.contentType ?? op.bodyType;
  }
  return { method: op.method, url, headers, body, expectRouted: routed, describe: `${op.method} ${url.slice(0, 120)} body=${what} auth=${c.auth} header=${c.header}` };
}
