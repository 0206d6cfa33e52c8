// Embeddings and moderation through the official openai SDK, against fakes built from the fixtures.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFloat32Base64 } from '../../server/providers/embeddings.ts';
import { errorBody } from '../helpers/gateway.ts';
import { startTextGateway } from '../helpers/text-gateway.ts';

let t: Awaited<ReturnType<typeof startTextGateway>>;
let oa: OpenAI;
beforeAll(async () => {
  t = await startTextGateway();
  oa = new OpenAI({ baseURL: `${t.gw.url}/v1`, apiKey: t.key, maxRetries: 0 });
});
afterAll(() => t?.close());

const FIXTURE = [0.0057293195, -0.012727811, 0.020042092, -0.013437585, 0.022833068];
const f32 = (xs: number[]) => Array.from(new Float32Array(xs));

describe('embeddings', () => {
  it('encodes base64 as little-endian float32, byte for byte as OpenAI does', () => {
    const b64 = encodeFloat32Base64([1, -2.5, 0.1]);
    expect(Buffer.from(b64, 'base64')).toEqual(Buffer.from([0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x20, 0xc0, 0xcd, 0xcc, 0xcc, 0x3d]));
  });

  it.each(['float', 'base64'] as const)('OpenAI upstream, %s: the SDK gets the recorded vectors', async (encoding_format) => {
    const r = await oa.embeddings.create({ model: 'embed-model', input: ['a', 'b'], encoding_format });
    expect(r.data.map((d) => d.index)).toEqual([0, 1]);
    const first = r.data[0]!.embedding as unknown;
    if (encoding_format === 'float') expect(first).toEqual(FIXTURE);
    else expect(Buffer.from(first as string, 'base64').equals(Buffer.from(encodeFloat32Base64(FIXTURE), 'base64'))).toBe(true);
    expect(r.usage).toEqual({ prompt_tokens: 12, total_tokens: 12 });
  });

  it('the SDK default (it asks for base64 and decodes) round-trips', async () => {
    const r = await oa.embeddings.create({ model: 'embed-model', input: 'hello' });
    expect(r.data[0]!.embedding).toEqual(f32(FIXTURE));
  });

  it.each(['float', 'base64'] as const)('Gemini upstream (batched), %s, in the familiar shape', async (encoding_format) => {
    const r = await oa.embeddings.create({ model: 'gemini-embed', input: ['one', 'three'], encoding_format });
    const sent = t.fake.requests.at(-1)!;
    expect(sent.path).toContain('/models/gemini-embedding-001:batchEmbedContents');
    expect(sent.body.requests).toHaveLength(2);
    const decode = (b64: string) => {
      const b = Buffer.from(b64, 'base64');
      return Array.from({ length: b.length / 4 }, (_, i) => b.readFloatLE(i * 4));
    };
    const vectors = r.data.map((d) => (encoding_format === 'float' ? d.embedding : decode(d.embedding as unknown as string)));
    expect(vectors[0]).toEqual(f32([0.25, -0.5, 1.5, 3]));
    expect(vectors[1]).toEqual(f32([0.5, -0.5, 1.5, 5]));
    expect(r).toMatchObject({ object: 'list', model: 'gemini-embed' });
  });

  it('fails over to the next upstream and bills prompt tokens × multiplier', async () => {
    const res = await t.gw.fetch('/v1/embeddings', { method: 'POST', key: t.key, json: { model: 'compat-embed', input: 'x' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit-tokens')).toBeTruthy();
    const billedRes = await t.gw.fetch('/v1/embeddings', { method: 'POST', key: t.key, json: { model: 'embed-model', input: 'x' } });
    await t.gw.services.ledger.flush();
    const row = await t.gw.services.db.prisma.usageRecord.findFirst({ where: { requestId: billedRes.headers.get('x-request-id')! } });
    expect(row).toMatchObject({ endpoint: 'embeddings', promptTokens: 12, completionTokens: 0, multiplier: 0.5, billedTokens: 6n, usageSource: 'reported' });
  });

  it('refuses text models and unknown models', async () => {
    let res = await t.gw.fetch('/v1/embeddings', { method: 'POST', key: t.key, json: { model: 'openai-text', input: 'x' } });
    expect(await errorBody(res)).toMatchObject({ code: 'model_not_supported', param: 'model' });
    res = await t.gw.fetch('/v1/embeddings', { method: 'POST', key: t.key, json: { model: 'nope', input: 'x' } });
    expect(await errorBody(res)).toMatchObject({ code: 'model_not_found' });
  });
});

describe('the same headers as every endpoint', () => {
  const post = (path: string, json: object) => t.gw.fetch(path, { method: 'POST', key: t.key, json });
  const overhead = (r: Response) => Number(r.headers.get('x-gateway-overhead-ms'));

  it('embeddings name the upstream that answered (after failover) and the gateway’s own time', async () => {
    const res = await post('/v1/embeddings', { model: 'compat-embed', input: 'x' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gateway-upstream')).toBe('compat');
    expect(res.headers.get('x-gateway-overhead-ms')).toMatch(/^\d+\.\d{2}$/);
    expect(overhead(res)).toBeLessThan(50);
    expect(res.headers.get('x-gateway-warnings')).toBeNull();
  });

  it('a field the upstream has no place for is dropped and named in X-Gateway-Warnings', async () => {
    const res = await post('/v1/embeddings', { model: 'gemini-embed', input: 'x', user: 'u-1' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gateway-upstream')).toBe('gemini');
    expect(res.headers.get('x-gateway-warnings')).toBe("not supported by this model's provider, dropped: user");
    expect(t.fake.requests.at(-1)!.body).toEqual({ requests: [{ model: 'models/gemini-embedding-001', content: { parts: [{ text: 'x' }] } }] });
    // OpenAI takes it: passed through, no warning.
    const openai = await post('/v1/embeddings', { model: 'embed-model', input: 'x', user: 'u-1' });
    expect(openai.headers.get('x-gateway-warnings')).toBeNull();
    expect(t.fake.requests.at(-1)!.body.user).toBe('u-1');
  });

  it('moderation names its upstream and time too', async () => {
    const res = await post('/v1/moderations', { input: 'hello' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gateway-upstream')).toBe('openai');
    expect(overhead(res)).toBeGreaterThanOrEqual(0);
    expect(overhead(res)).toBeLessThan(50);
  });
});

describe('moderations', () => {
  it('defaults to omni-moderation-latest and returns flags and scores', async () => {
    const r = await oa.moderations.create({ input: ['I will kill the process', 'hello'] });
    expect(t.fake.requests.at(-1)!.body.model).toBe('omni-moderation-latest');
    expect(r.model).toBe('omni-moderation-latest');
    expect(r.results[0]).toMatchObject({ flagged: true, categories: { violence: true } });
    expect(r.results[0]!.category_scores.violence).toBeCloseTo(0.91);
    expect(r.results[1]!.flagged).toBe(false);
    expect(Object.keys(r.results[1]!.categories)).toHaveLength(13);
  });

  it('maps the legacy model names and validates the enum', async () => {
    await oa.moderations.create({ model: 'text-moderation-stable', input: 'hi' });
    expect(t.fake.requests.at(-1)!.body.model).toBe('omni-moderation-latest');
    const res = await t.gw.fetch('/v1/moderations', { method: 'POST', key: t.key, json: { model: 'gpt-4o', input: 'hi' } });
    expect(await errorBody(res)).toMatchObject({ type: 'invalid_request_error', param: 'model' });
  });
});
