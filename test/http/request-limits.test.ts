// What the server answers before a route can (issue 30): headers that trickle in and bodies that
// stall are closed with 408 within REQUEST_HEADERS_TIMEOUT_MS / REQUEST_BODY_TIMEOUT_MS, while
// answers that take longer than both (a slow upstream, a long stream) are never cut; and the OAuth
// protocol endpoints answer these errors, and oversized headers (431), as `{error, error_description}`.
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const HEADERS_MS = 1_000;
const BODY_MS = 2_000;
// Longer than both limits.
const UPSTREAM_MS = 3_500;

let upstream: Server;
let gw: TestGateway;
let key: string;
const lines: string[] = [];

beforeAll(async () => {
  // An OpenAI-format upstream that takes its time: the whole answer after UPSTREAM_MS, or a stream
  // whose events are spread over it.
  upstream = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => void (async () => {
      const stream = (JSON.parse(raw) as { stream?: boolean }).stream;
      const usage = { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 };
      if (!stream) {
        await new Promise((r) => setTimeout(r, UPSTREAM_MS));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'slow', choices: [{ index: 0, message: { role: 'assistant', content: 'late' }, finish_reason: 'stop' }], usage }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const word of ['slow', ' but', ' sure']) {
        res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'slow', choices: [{ index: 0, delta: { content: word }, finish_reason: null }] })}\n\n`);
        await new Promise((r) => setTimeout(r, UPSTREAM_MS / 3));
      }
      res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'slow', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
      res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'slow', choices: [], usage })}\n\ndata: [DONE]\n\n`);
      res.end();
    })());
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  gw = await startTestGateway({
    config: `
providers:
  - { id: openai, type: openai, base_url: "http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1", api_key: test-key }
models:
  - { id: slow, endpoint: chat, upstreams: [{ provider: openai, model: slow }] }
plans:
  - { id: free, rank: 0, daily_tokens: 100000, requests_per_minute: 100, max_concurrent_jobs: 1 }
`,
    env: { REQUEST_HEADERS_TIMEOUT_MS: String(HEADERS_MS), REQUEST_BODY_TIMEOUT_MS: String(BODY_MS) },
    logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }),
  });
  key = await gw.newKey();
});
afterAll(async () => {
  await gw?.close();
  await new Promise<void>((r) => upstream?.close(() => r()));
});

type Raw = { status: number | null; headers: Record<string, string>; body: string; closed: boolean; ms: number };

/**
 * Writes `parts` on one connection (a number: a pause of that many ms) and reads until the server
 * closes it or `giveUpMs` passes. `trickle`: after the parts, that chunk every 100 ms until closed.
 */
function raw(parts: (string | number)[], opts: { trickle?: string; giveUpMs?: number } = {}): Promise<Raw> {
  const { port } = new URL(gw.url);
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = connect(Number(port), '127.0.0.1');
    let data = '';
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearInterval(timer);
      clearTimeout(giveUp);
      const ms = Date.now() - started;
      socket.destroy();
      const split = data.indexOf('\r\n\r\n');
      const head = (split < 0 ? data : data.slice(0, split)).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of head.slice(1)) if (line.includes(':')) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
      const status = /^HTTP\/1\.1 (\d{3})/.exec(head[0] ?? '');
      resolve({ status: status ? Number(status[1]) : null, headers, body: split < 0 ? '' : data.slice(split + 4), closed, ms });
    };
    const giveUp = setTimeout(() => finish(false), opts.giveUpMs ?? 8_000);
    socket.on('data', (d) => (data += d.toString('latin1')));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    socket.on('connect', () => void (async () => {
      for (const part of parts) {
        if (typeof part === 'number') await new Promise((r) => setTimeout(r, part));
        else if (!socket.destroyed) socket.write(part);
      }
      if (opts.trickle) timer = setInterval(() => !socket.destroyed && socket.write(opts.trickle!), 100);
    })());
  });
}

describe('request timeouts', () => {
  it('headers trickled in are cut with 408 request_timeout once REQUEST_HEADERS_TIMEOUT_MS has passed', async () => {
    const res = await raw(['GET /v1/models HTTP/1.1\r\nHost: x\r\n'], { trickle: 'X-Pad: a\r\n' });
    expect(res).toMatchObject({ status: 408, closed: true });
    expect(res.headers.connection).toBe('close');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(JSON.parse(res.body)).toEqual({
      error: {
        message: 'The request headers were not received within 1 s: send them at once (the operator sets the limit: REQUEST_HEADERS_TIMEOUT_MS).',
        type: 'invalid_request_error',
        code: 'request_timeout',
        param: null,
      },
    });
    expect(res.ms).toBeGreaterThanOrEqual(HEADERS_MS - 50);
    expect(res.ms).toBeLessThan(HEADERS_MS + 2_500);
  });

  it('a body that stalls is cut with 408 once REQUEST_BODY_TIMEOUT_MS has passed since the request began', async () => {
    const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n`;
    const res = await raw([head, '{"model": "slow", "messages": [']);
    expect(res).toMatchObject({ status: 408, closed: true });
    expect(JSON.parse(res.body)).toEqual({
      error: {
        message: "The request body was not received within 2 s of the request's start: send it without pausing (the operator sets the limit: REQUEST_BODY_TIMEOUT_MS).",
        type: 'invalid_request_error',
        code: 'request_timeout',
        param: null,
      },
    });
    expect(res.ms).toBeGreaterThanOrEqual(BODY_MS - 50);
    expect(res.ms).toBeLessThan(BODY_MS + 2_500);
  });

  it('a body that trickles for longer than the limit is cut the same way', async () => {
    const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`;
    const res = await raw([head], { trickle: ' ' });
    expect(res).toMatchObject({ status: 408, closed: true });
    expect(JSON.parse(res.body).error.code).toBe('request_timeout');
    expect(res.ms).toBeLessThan(BODY_MS + 2_500);
  });

  it('ten stalled bodies at once are all closed, and the gateway serves on', async () => {
    const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{`;
    const all = await Promise.all(Array.from({ length: 10 }, () => raw([head])));
    expect(all.map((r) => [r.status, r.closed])).toEqual(Array.from({ length: 10 }, () => [408, true]));
    expect((await fetch(`${gw.url}/v1/models`)).status).toBe(200);
  });

  it('an answer that takes longer than both limits is not cut: a slow upstream, and a long stream', { timeout: 30_000 }, async () => {
    const slow = await gw.fetch('/v1/chat/completions', { method: 'POST', key, json: { model: 'slow', messages: [{ role: 'user', content: 'hi' }] } });
    expect(slow.status).toBe(200);
    expect(((await slow.json()) as any).choices[0].message.content).toBe('late');

    const started = Date.now();
    const stream = await gw.fetch('/v1/chat/completions', { method: 'POST', key, json: { model: 'slow', stream: true, messages: [{ role: 'user', content: 'hi' }] } });
    expect(stream.status).toBe(200);
    const text = await stream.text();
    expect(Date.now() - started).toBeGreaterThanOrEqual(UPSTREAM_MS - 100);
    const words = text
      .split('\n')
      .filter((l) => l.startsWith('data: {'))
      .map((l) => JSON.parse(l.slice(6)).choices[0]?.delta?.content ?? '')
      .join('');
    expect(words).toBe('slow but sure');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('a stalled body on the OAuth token endpoint is 408 in RFC 6749’s body', async () => {
    const head = 'POST /v1/oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\n';
    const res = await raw([head, 'grant_type=authorization_code&code=']);
    expect(res).toMatchObject({ status: 408, closed: true });
    expect(res.headers['cache-control']).toBe('no-store');
    expect(JSON.parse(res.body)).toEqual({
      error: 'invalid_request',
      error_description: "The request body was not received within 2 s of the request's start: send it without pausing (the operator sets the limit: REQUEST_BODY_TIMEOUT_MS).",
    });
  });

  it('none of this is logged as a server error, nor as an outage', () => {
    expect(lines.filter((l) => /"level":(50|60)/.test(l))).toEqual([]);
    expect(lines.filter((l) => /database_unavailable|counter_store_unavailable/.test(l))).toEqual([]);
  });

  it('a headers limit longer than the whole request’s stops the start with what to change', async () => {
    await expect(startTestGateway({ env: { REQUEST_HEADERS_TIMEOUT_MS: '5000', REQUEST_BODY_TIMEOUT_MS: '1000' } })).rejects.toThrow(
      'REQUEST_HEADERS_TIMEOUT_MS (5000) must not be longer than REQUEST_BODY_TIMEOUT_MS (1000), which bounds the whole request',
    );
    await expect(startTestGateway({ env: { REQUEST_BODY_TIMEOUT_MS: 'soon' } })).rejects.toThrow("REQUEST_BODY_TIMEOUT_MS must be a positive number of milliseconds (got 'soon')");
  });
});

describe('headers over 16 KiB', () => {
  const big = `X-Padding: ${'p'.repeat(17_000)}\r\n`;

  it.each([
    ['in one packet', ['POST /v1/oauth/token HTTP/1.1\r\nHost: x\r\n' + big + '\r\n']],
    // Node hands the request line over to JavaScript once 32 header fields are read: a client
    // sending that many, in many packets (the request line alone in the first).
    ['in many packets', ['POST /v1/oauth/token HTTP/1.1\r\nHost: x\r\n', 50, ...Array.from({ length: 40 }, (_, i) => [`X-Pad-${i}: ${'p'.repeat(500)}\r\n`, 5]).flat(), '\r\n']],
    ['on the userinfo endpoint', ['GET /v1/oauth/me HTTP/1.1\r\nHost: x\r\n' + big + '\r\n']],
    ['on the revocation endpoint, with a query string', ['POST /v1/oauth/revoke?x=1 HTTP/1.1\r\nHost: x\r\n' + big + '\r\n']],
  ])('to an OAuth protocol endpoint (%s): 431 as {error, error_description}', async (_name, parts) => {
    const res = await raw(parts as (string | number)[]);
    expect(res).toMatchObject({ status: 431, closed: true });
    expect(res.headers['cache-control']).toBe('no-store');
    expect(JSON.parse(res.body)).toEqual({ error: 'invalid_request', error_description: 'The request headers are larger than this server accepts (16 KiB in all).' });
  });

  it('anywhere else: 431 in the part-7 body, also on a keep-alive connection after an OAuth request', async () => {
    const res = await raw(['GET /v1/models HTTP/1.1\r\nHost: x\r\n', 50, ...Array.from({ length: 18 }, () => [`X-Pad: ${'p'.repeat(1_000)}\r\n`, 5]).flat(), '\r\n']);
    expect(res.status).toBe(431);
    expect(JSON.parse(res.body)).toEqual({ error: { message: 'The request headers are larger than this server accepts (16 KiB in all).', type: 'invalid_request_error', code: 'headers_too_large', param: null } });
    // An OAuth request answered, then a new request on the same connection: judged by its own path.
    const after = await raw(['POST /v1/oauth/revoke HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}', 300, `GET /v1/models HTTP/1.1\r\nHost: x\r\n${big}\r\n`]);
    expect(after.body).toContain('"code":"headers_too_large"');
    expect(after.body).toContain('HTTP/1.1 431');
  });
});

describe('malformed HTTP', () => {
  it('a broken chunked body to the OAuth token endpoint: 400 as {error, error_description}; elsewhere the part-7 body', async () => {
    const message = 'The request is not valid HTTP/1.1 (malformed request line or headers, or conflicting Content-Length and Transfer-Encoding).';
    const oauth = await raw(['POST /v1/oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n']);
    expect(oauth).toMatchObject({ status: 400, closed: true });
    expect(JSON.parse(oauth.body)).toEqual({ error: 'invalid_request', error_description: message });
    const chat = await raw([`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n`]);
    expect(chat).toMatchObject({ status: 400, closed: true });
    expect(JSON.parse(chat.body)).toEqual({ error: { message, type: 'invalid_request_error', code: 'malformed_request', param: null } });
  });
});
