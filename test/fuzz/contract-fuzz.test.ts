// The contract-driven fuzzer: for every operation of the OpenAPI document, generated valid bodies
// and mutations, odd paths, queries and headers, sent through real HTTP to a gateway whose models
// reach the fake upstreams. Every answer must be declared for its operation and valid against the
// declared schema (SSE events included), never a 500; malformed HTTP on raw sockets gets the part-7
// body; the server is healthy afterwards. FUZZ_RUNS cases per operation (CI: the default, a smoke
// run), FUZZ_SEED to replay.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTextGateway } from '../helpers/text-gateway.ts';
import type { TestGateway } from '../helpers/gateway.ts';
import { buildRequest, caseArbitrary, operations, type BuiltRequest, type Credentials, type OpenApiDoc, type Operation } from './cases.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 8);
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);

let gw: TestGateway;
let close: () => Promise<void>;
// The committed document (the check step keeps it equal to what the server builds).
const doc = JSON.parse(readFileSync(new URL('../../openapi/openapi.json', import.meta.url), 'utf8')) as OpenApiDoc;
let creds: Credentials;
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false });
const seen = new Map<string, number>();

beforeAll(async () => {
  const t = await startTextGateway();
  gw = t.gw;
  close = t.close;
  ajv.addSchema(doc as never, 'openapi');
  creds = {
    apiKey: t.key,
    adminToken: gw.services.adminTokens.known!,
    models: {
      chat: ['openai-text', 'anthropic-text', 'gemini-text', 'compat-text', 'openai-reasoning', 'gemini-agentic', 'anthropic-thinker', 'openai-fail400', 'failover'],
      messages: ['claude-sonnet-4-5', 'anthropic-text', 'openai-text', 'gemini-text'],
      embeddings: ['embed-model', 'gemini-embed'],
      moderation: ['omni-moderation-latest'],
    },
  };
}, 60_000);
afterAll(async () => {
  console.log(`fuzz: ${[...seen.values()].reduce((a, b) => a + b, 0)} requests, statuses ${JSON.stringify(Object.fromEntries([...seen].sort()))} (FUZZ_RUNS=${RUNS}, FUZZ_SEED=${SEED})`);
  await close?.();
});

const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
const validators = new Map<string, ReturnType<typeof ajv.compile>>();
function validatorFor(op: Operation, status: string, type: string) {
  const key = `${op.method} ${op.path} ${status} ${type}`;
  let v = validators.get(key);
  if (!v) {
    v = ajv.compile({ $ref: `openapi#/${pointer('paths', op.path, op.method.toLowerCase(), 'responses', status, 'content', type, 'schema')}` });
    validators.set(key, v);
  }
  return v;
}

async function send(req: BuiltRequest): Promise<{ status: number; type: string; text: string }> {
  const res = await fetch(`${gw.url}${req.url}`, { method: req.method, headers: req.headers, body: req.body, signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  seen.set(String(res.status), (seen.get(String(res.status)) ?? 0) + 1);
  if (process.env.FUZZ_TRACE) console.log(res.status, req.describe, text.slice(0, 160).replace(/\s+/g, ' '));
  return { status: res.status, type: (res.headers.get('content-type') ?? '').split(';')[0]!.trim(), text };
}

/** Throws (with the request named) when the answer breaks the contract. */
function check(op: Operation, req: BuiltRequest, res: { status: number; type: string; text: string }): void {
  const where = `${req.describe} → ${res.status} ${res.text.slice(0, 300)}`;
  if (res.status >= 500 && res.status !== 502 && res.status !== 503 && res.status !== 524) throw new Error(`server error: ${where}`);
  // Unrouted (an undecodable path): 400 in the body the operation declares for 400, which is the
  // body its clients read (Google's on the Gemini-format routes), checked below.
  if (!req.expectRouted && res.status !== 431 && res.status !== 400) throw new Error(`unrouted request not answered 400: ${where}`);
  const declared = op.op.responses?.[String(res.status)];
  if (!declared) throw new Error(`status ${res.status} not declared for ${op.id}: ${where}`);
  const content = declared.content as Record<string, unknown> | undefined;
  if (!content || !res.text) return;
  const type = Object.keys(content).find((t) => t.split(';')[0] === res.type);
  if (!type) throw new Error(`content type '${res.type}' not declared for ${op.id} ${res.status}: ${where}`);
  if (type === 'application/json') {
    const validate = validatorFor(op, String(res.status), type);
    if (!validate(JSON.parse(res.text))) throw new Error(`body does not match the declared schema (${ajv.errorsText(validate.errors)}): ${where}`);
  } else if (type === 'text/event-stream') {
    const validate = validatorFor(op, String(res.status), type);
    for (const block of res.text.split(/\r?\n\r?\n/)) {
      const data = block
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .join('\n');
      if (!data || data === '[DONE]') continue;
      const event = JSON.parse(data);
      // An in-stream error event is the format's own error shape, checked for its body.
      if (event.error || event.type === 'error' || event.type === 'response.failed') continue;
      if (!validate(event)) throw new Error(`stream event does not match the declared schema (${ajv.errorsText(validate.errors)}): ${data.slice(0, 300)} in ${where}`);
    }
  }
}

describe('contract fuzzer', () => {
  it('covers every operation of the document', () => {
    expect(operations(doc).length).toBe(59);
  });

  // One test per operation, so a failure names it; cases are generated and replayable by seed.
  it.each(operations(doc).map((op, i) => [`${op.method} ${op.path}`, op, i] as const))('%s', async (_name, op, i) => {
    await fc.assert(
      fc.asyncProperty(caseArbitrary, async (c) => {
        const req = buildRequest(op, c, doc, creds);
        check(op, req, await send(req));
      }),
      { numRuns: RUNS, seed: SEED + i, endOnFailure: true },
    );
  }, 120_000);

  it('answers malformed HTTP on a raw socket with the part-7 body and closes', async () => {
    const { port, hostname } = new URL(gw.url);
    const raw = (payload: string) =>
      new Promise<string>((resolve) => {
        const s = net.connect(Number(port), hostname, () => s.write(payload));
        let out = '';
        s.on('data', (d) => (out += d));
        s.on('close', () => resolve(out));
        s.on('error', () => resolve(out));
        setTimeout(() => s.destroy(), 5_000);
      });
    const cases: [string, string, number, string][] = [
      ['conflicting Content-Length and Transfer-Encoding', 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 400, 'malformed_request'],
      ['a NUL in a header value', 'GET /v1/models HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b\r\n\r\n', 400, 'malformed_request'],
      ['a request line that is not HTTP', 'HELLO THERE\r\n\r\n', 400, 'malformed_request'],
      ['headers over 16 KiB', `GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(17_000)}\r\n\r\n`, 431, 'headers_too_large'],
      ['a header without a colon', 'GET /v1/models HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n', 400, 'malformed_request'],
    ];
    for (const [what, payload, status, code] of cases) {
      const out = await raw(payload);
      expect(out.split('\r\n')[0], what).toBe(`HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}`);
      const body = JSON.parse(out.slice(out.indexOf('\r\n\r\n') + 4));
      expect(body.error, what).toMatchObject({ type: 'invalid_request_error', code, param: null });
      expect(out, what).not.toContain('b'.repeat(100));
    }
  });

  it('leaves the server healthy: liveness, readiness and a real answer', async () => {
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${gw.url}/readyz`)).status).toBe(200);
    const res = await gw.fetch('/v1/chat/completions', { method: 'POST', key: creds.apiKey, json: { model: 'openai-text', messages: [{ role: 'user', content: 'hi' }] } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).choices[0].message.role).toBe('assistant');
  });
});
