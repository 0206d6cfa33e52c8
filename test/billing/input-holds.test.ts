// Issue 42 (security audit): spend budgets overshot under concurrency when a hold under-estimated
// its input. 100 concurrent requests, each with one high-detail image and `max_tokens: 10`, under
// a user's budget of $0.01 at gpt-4o-mini's prices: the hold counted the image as 85 tokens, the
// provider bills 25,501 for it, and 75 passed, spending $0.29. Holds now bound what a provider can
// bill for every input but text, so the budget holds exactly; input nothing bounds (a PDF) holds
// the model's context window, or everything that remains.
//
// The upstream answers nobody until every request has been admitted or refused: every admission
// happens before any settlement, so what passes depends on the holds alone, never on timing.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COUNTER_STORES } from '../helpers/billing-gateway.ts';
import { errorBody, quotaOf, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { PDF, b64, dataUrl, png } from '../helpers/media-files.ts';

type Json = Record<string, any>;

/** An OpenAI chat and Anthropic Messages upstream that holds every answer until `open()`. */
async function gatedUpstream(usage: { input: number; output: number }) {
  let arrived = 0;
  let open = () => {};
  let gate = Promise.resolve();
  const server: Server = createServer((req, res) => void (async () => {
    let text = '';
    for await (const c of req) text += c;
    const body = JSON.parse(text) as Json;
    arrived++;
    await gate;
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url!.endsWith('/chat/completions')) {
      res.end(
        JSON.stringify({
          id: 'chatcmpl-gated',
          object: 'chat.completion',
          created: 1770933883,
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content: 'A black square.' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output },
        }),
      );
    } else {
      res.end(
        JSON.stringify({
          id: 'msg_gated',
          type: 'message',
          role: 'assistant',
          model: body.model,
          content: [{ type: 'text', text: 'A one-page document.' }],
          stop_reason: 'end_turn',
          stop_sequence: null,
          usage: { input_tokens: usage.input, output_tokens: usage.output },
        }),
      );
    }
  })());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** Requests that reached the upstream (were admitted). */
    get arrived() {
      return arrived;
    },
    /** Holds answers until `release()`. */
    hold() {
      arrived = 0;
      gate = new Promise<void>((r) => (open = r));
    },
    release: () => open(),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
type Gated = Awaited<ReturnType<typeof gatedUpstream>>;

/**
 * Sends `n` requests at once; the upstream answers once each was admitted (reached it) or
 * refused. Returns the statuses and one refusal.
 */
async function burst(upstream: Gated, n: number, send: () => Promise<Response>) {
  upstream.hold();
  let refused = 0;
  const answers = Array.from({ length: n }, () =>
    send().then(async (res) => {
      if (res.status !== 200) refused++;
      return { status: res.status, body: res.status === 200 ? await res.json() : await errorBody(res) };
    }),
  );
  while (upstream.arrived + refused < n) await new Promise((r) => setTimeout(r, 5));
  upstream.release();
  const done = await Promise.all(answers);
  return { ok: done.filter((a) => a.status === 200).length, refusals: done.filter((a) => a.status !== 200).map((a) => a.body as Json), others: done.filter((a) => a.status !== 200 && a.status !== 429) };
}

// gpt-4o-mini's prices: $0.15 and $0.60 per million tokens.
const config = (upstream: string) => `
providers:
  - { id: openai, type: openai, base_url: "${upstream}/v1", api_key: k }
  - { id: anthropic, type: anthropic, base_url: "${upstream}/v1", api_key: k }
models:
  - { id: gpt-4o-mini, endpoint: chat, upstreams: [{ provider: openai, model: gpt-4o-mini }], pricing: { prompt: "0.00000015", completion: "0.0000006" } }
  - { id: claude-docs, endpoint: messages, upstreams: [{ provider: anthropic, model: claude-docs }], pricing: { prompt: "0.000003", completion: "0.000015" } }
  - { id: claude-docs-20k, endpoint: messages, context_window: 20000, upstreams: [{ provider: anthropic, model: claude-docs }], pricing: { prompt: "0.000003", completion: "0.000015" } }
  - { id: claude-docs-window, endpoint: messages, context_window: 5000, upstreams: [{ provider: anthropic, model: claude-docs }], pricing: { prompt: "0.000003", completion: "0.000015" } }
plans:
  - { id: audited, rank: 0, daily_tokens: 100000000, requests_per_minute: 100000, user_daily_budget_usd: "0.01" }
  - { id: documents, rank: 1, daily_tokens: 100000000, requests_per_minute: 100000, daily_budget_usd: "0.05" }
  - { id: tight, rank: 2, daily_tokens: 40000, requests_per_minute: 100000 }
default_plan: audited
key_cache_ttl_ms: 60000
`;

/** The audit's request: one 1024×1024 PNG (inline, high detail by default), a question, `max_tokens: 10`. */
const IMAGE_REQUEST = {
  model: 'gpt-4o-mini',
  max_tokens: 10,
  messages: [{ role: 'user', content: [{ type: 'text', text: 'What is in this image?' }, { type: 'image_url', image_url: { url: dataUrl('image/png', png(1024, 1024)) } }] }],
};
// What gpt-4o-mini reports for it: 25,501 image tokens and 12 of text; 10 out.
const IMAGE_USAGE = { input: 25_513, output: 10 };
const NANO = 1e-9;
const nano = (usd: string) => Math.round(Number(usd) / NANO);

describe.each(COUNTER_STORES)('with %s counters', (_name, env) => {
  describe('the audit: 100 concurrent one-image requests under a $0.01 user budget', () => {
    let upstream: Gated;
    let gw: TestGateway;
    beforeAll(async () => {
      upstream = await gatedUpstream(IMAGE_USAGE);
      gw = await startTestGateway({ config: config(upstream.url), env });
    });
    afterAll(async () => {
      await gw?.close();
      await upstream?.close();
    });

    it('spend stays within the budget: each hold bounds its image (25,501 tokens, from the PNG header), so 2 pass', async () => {
      const key = await gw.newKey('audited');
      const r = await burst(upstream, 100, () => gw.fetch('/v1/chat/completions', { method: 'POST', key, json: IMAGE_REQUEST }));
      // Each hold: (6 text + 25,501 image) × $0.15/M + 10 × $0.60/M = $0.00383205; two fit in $0.01.
      // (Before: (6 + 85) × $0.15/M + 10 × $0.60/M = $0.00001965 a hold, and all 100 passed: $0.383.)
      expect(r).toMatchObject({ ok: 2, others: [] });
      expect(r.refusals).toHaveLength(98);
      expect(r.refusals[0]).toMatchObject({ code: 'budget_exceeded', scope: 'user', limit_usd: '0.01' });
      const usage: any = await (await gw.fetch('/v1/usage', { key })).json();
      const spent = nano(usage.budgets.user.daily.spent_usd);
      const limit = nano(usage.budgets.user.daily.limit_usd);
      // The documented bound: never more than the limit when every input is bounded.
      expect(spent).toBeLessThanOrEqual(limit);
      // Exactly what the two answers cost, nothing still held.
      expect(spent).toBe(2 * (25_513 * 150 + 10 * 600));
      expect(usage.totals).toMatchObject({ requests: 2, cost: '0.0076659' });
      expect(await quotaOf(gw, key)).toEqual({ settled: 2 * (25_513 + 10), reserved: 0 });
    });
  });

  describe('an image by URL (its size unknown until the upstream fetches it)', () => {
    let upstream: Gated;
    let gw: TestGateway;
    beforeAll(async () => {
      // What gpt-4o-mini reports for a small image and its question.
      upstream = await gatedUpstream({ input: 800, output: 10 });
      gw = await startTestGateway({ config: config(upstream.url), env });
    });
    afterAll(async () => {
      await gw?.close();
      await upstream?.close();
    });
    const urlRequest = { ...IMAGE_REQUEST, messages: [{ role: 'user', content: [{ type: 'text', text: 'What is in this image?' }, { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }] };
    const send = (key: string) => () => gw.fetch('/v1/chat/completions', { method: 'POST', key, json: urlRequest });

    it('is admitted on a usual image and holds its bound when that fits, else all that remains: a 40,000-token quota under a 48,169-token bound still serves one at a time', async () => {
      const key = await gw.newKey('tight');
      for (let i = 0; i < 3; i++) expect(await burst(upstream, 1, send(key))).toMatchObject({ ok: 1 });
      expect(await quotaOf(gw, key)).toEqual({ settled: 3 * 810, reserved: 0 });
      // At once: the first holds what remains (its bound does not fit), so the others are refused.
      const r = await burst(upstream, 5, send(key));
      expect(r).toMatchObject({ ok: 1, others: [] });
      expect(r.refusals[0]).toMatchObject({ code: 'daily_quota_exceeded', remaining: 0 });
      expect(await quotaOf(gw, key)).toEqual({ settled: 4 * 810, reserved: 0 });
    });
  });

  describe('input nothing bounds (a PDF)', () => {
    let upstream: Gated;
    let gw: TestGateway;
    beforeAll(async () => {
      // What a short PDF and its question cost at Anthropic: 3,000 in, 100 out ($0.0105).
      upstream = await gatedUpstream({ input: 3_000, output: 100 });
      gw = await startTestGateway({ config: config(upstream.url), env });
    });
    afterAll(async () => {
      await gw?.close();
      await upstream?.close();
    });
    const pdfRequest = (model: string) => ({
      model,
      max_tokens: 100,
      messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: b64(PDF) } }, { type: 'text', text: 'Summarize' }] }],
    });
    const send = (key: string, model: string) => () => gw.fetch('/v1/messages', { method: 'POST', key, json: pdfRequest(model) });

    it('no context window known: a request holds all that remains of the quota and budget, so one runs at a time; the next passes once it settled', async () => {
      const key = await gw.newKey('documents');
      const first = await burst(upstream, 5, send(key, 'claude-docs'));
      expect(first).toMatchObject({ ok: 1, others: [] });
      // The token quota is held whole too (its refusal is named first).
      expect(first.refusals[0]).toMatchObject({ type: 'rate_limit_error', code: 'daily_quota_exceeded', remaining: 0 });
      const usage: any = await (await gw.fetch('/v1/usage', { key })).json();
      expect(usage.budgets.key.daily).toMatchObject({ spent_usd: '0.0105', remaining_usd: '0.0395' });
      expect(await quotaOf(gw, key)).toEqual({ settled: 3_100, reserved: 0 });
      // Released when it settled: the next one passes.
      expect(await burst(upstream, 3, send(key, 'claude-docs'))).toMatchObject({ ok: 1 });
      expect(await quotaOf(gw, key)).toEqual({ settled: 6_200, reserved: 0 });
    });

    it('a context window of 20,000 tokens: the token quota holds 20,100, the budget ($0.0615 > $0.05) all that remains', async () => {
      const key = await gw.newKey('documents');
      const r = await burst(upstream, 5, send(key, 'claude-docs-20k'));
      expect(r).toMatchObject({ ok: 1, others: [] });
      expect(r.refusals[0]).toMatchObject({ code: 'budget_exceeded', limit_usd: '0.05', remaining_usd: '0' });
    });

    it('a context window of 5,000 tokens bounds it: held at 5,000 in and 100 out ($0.0165), three fit in $0.05', async () => {
      const key = await gw.newKey('documents');
      const r = await burst(upstream, 5, send(key, 'claude-docs-window'));
      expect(r).toMatchObject({ ok: 3, others: [] });
      const usage: any = await (await gw.fetch('/v1/usage', { key })).json();
      expect(usage.budgets.key.daily).toMatchObject({ spent_usd: '0.0315' });
    });
  });
});
