// Values a client controls never reach storage unchecked (issue 42): the gateway's request id is
// its own, a client's X-Request-Id is validated and kept beside it; a NUL in a model name is a 400
// that costs the request log nothing; requests sharing a client id keep every ledger row; the
// request log's reads refuse what they cannot look up; a request whose body never came is
// recorded as the client saw it.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody, keyCounters, type TestGateway } from '../helpers/gateway.ts';
import { startTextGateway } from '../helpers/text-gateway.ts';

type Rec = Record<string, any>;
let gw: TestGateway;
let close: () => Promise<void>;
let key: string;
let keyId: string;

beforeAll(async () => {
  const t = await startTextGateway();
  ({ gw, close, key } = t);
  keyId = (await gw.services.keys.authenticate(key))!.keyId;
});
afterAll(async () => close?.());

const body = (model = 'openai-text') => ({ model, max_tokens: 5, messages: [{ role: 'user', content: 'Say ok' }] });
const chat = (headers: Record<string, string> = {}, json: unknown = body(), as = key) => gw.fetch('/v1/chat/completions', { method: 'POST', key: as, headers, json });

/** Everything written: the request log and the ledger flushed. */
async function settled(): Promise<void> {
  await gw.services.requestLog.flush();
  await gw.services.ledger.flush();
}

async function ledgerOf(k: string): Promise<{ rows: number; daily: number; billed: number }> {
  await settled();
  const [r] = await gw.services.db.sql.query('SELECT count(*)::int AS n, coalesce(sum(billed_tokens), 0)::int AS billed FROM usage_records WHERE api_key_id = $1', [k]);
  const [d] = await gw.services.db.sql.query('SELECT coalesce(sum(requests), 0)::int AS n FROM usage_daily WHERE api_key_id = $1', [k]);
  return { rows: Number(r!.n), daily: Number(d!.n), billed: Number(r!.billed) };
}

async function records(query = '', as: 'key' | 'admin' = 'key'): Promise<Rec[]> {
  await settled();
  const res = as === 'key' ? await gw.fetch(`/v1/requests?limit=200${query}`, { key }) : await gw.fetch(`/admin/v1/requests?limit=200${query}`, { headers: { authorization: `Bearer ${gw.services.adminTokens.known}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as Rec).data;
}

describe('request ids', () => {
  it('the response’s X-Request-Id is the gateway’s; the client’s comes back in X-Client-Request-Id and is kept beside it', async () => {
    const mine = `trace-${'a'.repeat(400)}:1/2+3=4`;
    const res = await chat({ 'x-request-id': mine });
    expect(res.status).toBe(200);
    await res.text();
    const id = res.headers.get('x-request-id')!;
    expect(id).toMatch(/^req_[A-Za-z0-9]{20}$/);
    expect(res.headers.get('x-client-request-id')).toBe(mine);
    const [r] = await records(`&client_request_id=${encodeURIComponent(mine)}`);
    expect(r).toMatchObject({ request_id: id, client_request_id: mine, status: 200 });
    expect(r!.usage).not.toBeNull();
    // OpenAI's header name is read too, and wins.
    const openai = await chat({ 'x-client-request-id': 'from-openai-sdk', 'x-request-id': 'from-proxy' });
    expect(openai.headers.get('x-client-request-id')).toBe('from-openai-sdk');
    await openai.text();
  });

  it('a 4,000-letter X-Request-Id is refused (400 naming the header) and the ledger goes on: every answered request is in it', async () => {
    const before = await ledgerOf(keyId);
    const long = await chat({ 'x-request-id': 'A'.repeat(4000) });
    expect(long.status).toBe(400);
    expect(await errorBody(long)).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request_id', param: 'x-request-id' });
    // Refused, and recorded as refused (under the gateway's id, without the client's).
    const refusedId = long.headers.get('x-request-id')!;
    expect((await records('&status=400', 'admin')).find((r) => r.request_id === refusedId)).toMatchObject({ status: 400, error_code: 'invalid_request_id', client_request_id: null });
    const nonAscii = await chat({ 'x-request-id': 'caf\u00e9' });
    expect(nonAscii.status).toBe(400);
    expect((await errorBody(nonAscii)).param).toBe('x-request-id');
    let answered = 0;
    for (let i = 0; i < 5; i++) {
      const res = await chat({ 'x-request-id': `ok-${i}` });
      await res.text();
      if (res.status === 200) answered++;
    }
    expect(answered).toBe(5);
    const after = await ledgerOf(keyId);
    expect(after.rows - before.rows).toBe(5);
    expect(after.daily - before.daily).toBe(5);
    // The counters and the ledger agree.
    const counters = await keyCounters(gw.services, keyId);
    expect(counters.settled).toBe(after.billed);
    // A Gemini-format route answers the refusal in Google's shape.
    const gemini = await gw.fetch('/v1beta/models/gemini-text:generateContent', { method: 'POST', headers: { 'x-goog-api-key': key, 'x-request-id': 'B'.repeat(600) }, json: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] } });
    expect(gemini.status).toBe(400);
    expect(((await gemini.json()) as Rec).error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
  });

  it('200 concurrent requests sharing one X-Request-Id: 200 ledger rows, 200 records, each its own id', async () => {
    const before = await ledgerOf(keyId);
    const answers = await Promise.all(Array.from({ length: 200 }, () => chat({ 'x-request-id': 'dup-2' }).then(async (r) => ({ status: r.status, id: r.headers.get('x-request-id')!, text: await r.text() }))));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(new Set(answers.map((a) => a.id)).size).toBe(200);
    const after = await ledgerOf(keyId);
    expect(after.rows - before.rows).toBe(200);
    expect(after.daily - before.daily).toBe(200);
    const dup = await records('&client_request_id=dup-2');
    expect(dup).toHaveLength(200);
    expect(dup.every((r) => r.usage !== null)).toBe(true);
    expect(new Set(dup.map((r) => r.request_id))).toEqual(new Set(answers.map((a) => a.id)));
  });

  it('another user sending the same id reads only their own record and usage', async () => {
    const otherKey = await gw.newKey();
    const mine = await chat({ 'x-request-id': 'shared-id' });
    await mine.text();
    const theirs = await chat({ 'x-request-id': 'shared-id' }, body(), otherKey);
    await theirs.text();
    await settled();
    const seen = ((await (await gw.fetch('/v1/requests?client_request_id=shared-id', { key: otherKey })).json()) as Rec).data as Rec[];
    expect(seen.map((r) => r.request_id)).toEqual([theirs.headers.get('x-request-id')]);
    expect(seen[0]!.key.id).not.toBe(keyId);
    expect(seen[0]!.usage).not.toBeNull();
  });
});

describe('model names and stored strings', () => {
  it('a NUL in a model name is a 400 naming the model, and the request log keeps recording everyone', async () => {
    const path = await gw.fetch('/v1beta/models/x%00y:generateContent', { method: 'POST', headers: { 'x-goog-api-key': key }, json: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] } });
    expect(path.status).toBe(400);
    expect(((await path.json()) as Rec).error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
    const inBody = await chat({}, body('x\u0000y'));
    expect(inBody.status).toBe(400);
    expect(await errorBody(inBody)).toMatchObject({ param: 'model' });
    const surrogate = await chat({}, JSON.parse('{"model":"x\\ud800y","messages":[{"role":"user","content":"hi"}]}'));
    expect(surrogate.status).toBe(400);
    // Later requests are recorded, and so are the refused ones (without the model they named).
    const later = await chat({ 'x-request-id': 'after-nul' });
    await later.text();
    const [r] = await records('&client_request_id=after-nul');
    expect(r).toMatchObject({ status: 200, model: 'openai-text' });
    const refused = (await records('&status=400')).filter((x) => x.path.startsWith('/v1beta/models/'));
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((x) => x.model === null && !x.path.includes('\u0000'))).toBe(true);
  });

  it('GET /v1/requests refuses a cursor it could not have made and a NUL filter: 400, never 500', async () => {
    for (const cursor of ['1.9999999999999999999', '999999999999999.1']) {
      const res = await gw.fetch(`/v1/requests?cursor=${Buffer.from(cursor).toString('base64url')}`, { key });
      expect(res.status, cursor).toBe(400);
      expect((await errorBody(res)).param).toBe('cursor');
    }
    const nul = await gw.fetch('/v1/requests?model=%00', { key });
    expect(nul.status).toBe(400);
    expect((await errorBody(nul)).param).toBe('model');
  });
});

describe('requests whose body never came', () => {
  const raw = (payload: string, wait = 300) =>
    new Promise<string>((resolve) => {
      const { port, hostname } = new URL(gw.url);
      const s = net.connect(Number(port), hostname, () => s.write(payload));
      let out = '';
      s.on('data', (d) => (out += d));
      s.on('error', () => resolve(out));
      s.on('close', () => resolve(out));
      setTimeout(() => s.destroy(), wait);
    });

  it('a body cut short is recorded as the client left it (499), a malformed chunked body as its 400', async () => {
    const head = (extra: string, id: string) => `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nX-Request-Id: ${id}\r\n${extra}\r\n`;
    await raw(head('Content-Length: 5000\r\n', 'cut-short') + JSON.stringify(body()).slice(0, 40));
    const out = await raw(head('Transfer-Encoding: chunked\r\n', 'bad-chunks') + 'zz\r\n{}\r\n0\r\n\r\n', 1000);
    expect(out).toMatch(/^HTTP\/1\.1 400/);
    await new Promise((r) => setTimeout(r, 100));
    // Refused before or after the credential was checked (the body may fail first): read as the operator.
    const [cut] = await records('&client_request_id=cut-short', 'admin');
    expect(cut).toMatchObject({ status: 499, error_code: 'client_closed_request', aborted: true });
    const [chunks] = await records('&client_request_id=bad-chunks', 'admin');
    expect(chunks).toMatchObject({ status: 400, error_code: 'malformed_request' });
  });
});
