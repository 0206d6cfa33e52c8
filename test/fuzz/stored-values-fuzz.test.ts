// Issue 42's "done means": every header and path parameter a client controls, sent long, with a
// NUL, with bytes that are not UTF-8, with control characters and twice, through raw HTTP (fetch
// cannot send most of them) — then what the gateway stored equals what it answered: no 500, every
// 2xx inference answer has its ledger row under the id the client got, the ledger, `usage_daily`
// and the counters agree, every request the gateway saw (it answered with an X-Request-Id) has its
// request-log record, and the gateway is still healthy.
import net from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { keyCounters, type TestGateway } from '../helpers/gateway.ts';
import { startTextGateway } from '../helpers/text-gateway.ts';

type Answer = { status: number; headers: Record<string, string>; body: string; what: string };
let gw: TestGateway;
let close: () => Promise<void>;
let key: string;
let keyId: string;
let started: Date;

beforeAll(async () => {
  const t = await startTextGateway();
  ({ gw, close, key } = t);
  keyId = (await gw.services.keys.authenticate(key))!.keyId;
  started = new Date(Date.now() - 1000);
});
afterAll(async () => close?.());

/** One request on its own connection, written byte for byte (`latin1`: each char one byte). */
function send(method: string, path: string, headers: [string, string][], body: string | null, what: string): Promise<Answer> {
  return new Promise((resolve) => {
    const { port, hostname } = new URL(gw.url);
    const s = net.connect(Number(port), hostname);
    const lines = [`${method} ${path} HTTP/1.1`, 'Host: gw', 'Connection: close', ...headers.map(([n, v]) => `${n}: ${v}`)];
    if (body !== null) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
    s.write(Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'));
    if (body !== null) s.write(body);
    const chunks: Buffer[] = [];
    s.on('data', (d) => chunks.push(d));
    const done = () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...headerLines] = head.split('\r\n');
      const hs: Record<string, string> = {};
      for (const l of headerLines) {
        const i = l.indexOf(':');
        if (i > 0) hs[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1] ?? 0), headers: hs, body: rest.join('\r\n\r\n'), what });
    };
    s.on('close', done);
    s.on('error', () => undefined);
    s.setTimeout(20_000, () => s.destroy());
  });
}

/** The values a header or a path segment is tried with. */
const VALUES: [string, string][] = [
  ['long', 'v'.repeat(6000)],
  ['nul', 'a\u0000b'],
  ['latin1', 'caf\u00e9\u00ff'],
  ['utf8', Buffer.from('ü✓ 你好', 'utf8').toString('latin1')],
  ['control', 'a\u0001b\u007fc'],
  ['quote', `"'<script>\\`],
];
const HEADERS = ['x-request-id', 'x-client-request-id', 'anthropic-version', 'anthropic-beta', 'user-agent', 'traceparent', 'tracestate', 'openai-organization', 'openai-project', 'x-stainless-retry-count', 'accept', 'cookie', 'x-forwarded-for', 'idempotency-key', 'x-goog-api-key'];
const PATH_VALUES: [string, string][] = [
  ['long', 'p'.repeat(300)],
  ['nul', 'x%00y'],
  ['not-utf8', '%FF%FE'],
  ['bad-escape', '%E0%A4%A'],
  ['traversal', '..%2F..%2Fetc'],
  ['unicode', '%C3%BC%E2%9C%93'],
  ['slashes', 'a//b'],
];

const chatBody = JSON.stringify({ model: 'openai-text', max_tokens: 5, messages: [{ role: 'user', content: 'Say ok' }] });
const messagesBody = JSON.stringify({ model: 'anthropic-text', max_tokens: 5, messages: [{ role: 'user', content: 'Say ok' }] });
const geminiBody = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Say ok' }] }] });

it('stores exactly what it answers, whatever the headers and path parameters hold', async () => {
  const auth: [string, string] = ['Authorization', `Bearer ${key}`];
  const json: [string, string] = ['Content-Type', 'application/json'];
  const answers: Answer[] = [];
  // Every header, every value, once alone and once twice (a different value the second time), on
  // the three text formats' routes.
  for (const header of HEADERS) {
    for (const [name, value] of VALUES) {
      const extra: [string, string][] = [[header, value]];
      answers.push(await send('POST', '/v1/chat/completions', [auth, json, ...extra], chatBody, `chat ${header}=${name}`));
      answers.push(await send('POST', '/v1/messages', [auth, json, ['anthropic-version', '2023-06-01'], ...extra], messagesBody, `messages ${header}=${name}`));
    }
    answers.push(await send('POST', '/v1/chat/completions', [auth, json, [header, 'first'], [header, 'second']], chatBody, `chat ${header} twice`));
    answers.push(await send('POST', '/v1beta/models/gemini-text:generateContent', [auth, json, [header, 'v'.repeat(600)]], geminiBody, `gemini ${header}=long`));
  }
  // Every path parameter, every value.
  for (const [name, value] of PATH_VALUES) {
    answers.push(await send('POST', `/v1beta/models/${value}:generateContent`, [auth, json], geminiBody, `gemini model=${name}`));
    answers.push(await send('GET', `/v1/models/${value}`, [auth], null, `model=${name}`));
    answers.push(await send('GET', `/v1/images/generations/${value}`, [auth], null, `job=${name}`));
    answers.push(await send('POST', `/v1/keys/${value}/revoke`, [auth, json], '{}', `key=${name}`));
    answers.push(await send('GET', `/v1/requests?model=${value}&client_request_id=${value}`, [auth], null, `requests query=${name}`));
  }

  const statuses: Record<string, number> = {};
  for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
  console.log(`stored-values fuzz: ${answers.length} requests, statuses ${JSON.stringify(statuses)}`);
  // Nothing the client sent is a server error.
  const failed = answers.filter((a) => a.status === 0 || a.status >= 500);
  expect(failed.map((a) => `${a.what} → ${a.status} ${a.body.slice(0, 200)}`)).toEqual([]);
  expect(answers.every((a) => a.headers['content-type']?.startsWith('application/json') || a.status === 204)).toBe(true);

  await gw.services.requestLog.flush();
  await gw.services.ledger.flush();
  const sql = gw.services.db.sql;

  // Every 2xx inference answer is in the ledger, under the id the client received.
  const billed = answers.filter((a) => a.status === 200 && !a.what.startsWith('model=') && !a.what.startsWith('requests'));
  expect(billed.length).toBeGreaterThan(HEADERS.length * 4);
  const ids = billed.map((a) => a.headers['x-request-id']!);
  expect(ids.every((id) => /^req_[A-Za-z0-9]{20}$/.test(id))).toBe(true);
  const inLedger = await sql.query('SELECT request_id FROM usage_records WHERE request_id = ANY($1::text[])', [ids]);
  expect(inLedger.length).toBe(ids.length);

  // The ledger, the daily sums and the counters agree for the key.
  const [ledger] = await sql.query('SELECT count(*)::int AS n, coalesce(sum(billed_tokens), 0)::int AS billed FROM usage_records WHERE api_key_id = $1', [keyId]);
  const [daily] = await sql.query('SELECT coalesce(sum(requests), 0)::int AS n, coalesce(sum(billed_tokens), 0)::int AS billed FROM usage_daily WHERE api_key_id = $1', [keyId]);
  expect(daily).toEqual(ledger);
  expect((await keyCounters(gw.services, keyId)).settled).toBe(Number(ledger!.billed));

  // Every request the gateway itself answered (its X-Request-Id) on one of its routes has its
  // record, with usage exactly when it has a ledger row; GET /v1/requests and unknown routes are not recorded.
  const seen = answers.filter((a) => a.headers['x-request-id'] && !a.what.startsWith('requests') && !a.body.includes('Unknown route'));
  const recorded = await sql.query(`SELECT r.request_id, (SELECT count(*) FROM usage_records u WHERE u.request_id = r.request_id)::int AS billed FROM request_log r WHERE r.created_at >= $1`, [started]);
  const byId = new Map(recorded.map((r) => [String(r.request_id), Number(r.billed)]));
  expect(seen.filter((a) => !byId.has(a.headers['x-request-id']!)).map((a) => `${a.what} → ${a.status}`)).toEqual([]);
  expect(recorded.filter((r) => Number(r.billed) > 0).length).toBe(Number(ledger!.n));

  // Still healthy, and still writing.
  expect((await fetch(`${gw.url}/readyz`)).status).toBe(200);
  const after = await send('POST', '/v1/chat/completions', [auth, json], chatBody, 'after');
  expect(after.status).toBe(200);
}, 180_000);
