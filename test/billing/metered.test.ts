// Metered billing for any unit (issue 17): each capability sizes its reservation, the model's rule
// converts non-token work into quota tokens, reported token usage wins, and a reservation kept as
// data (an async job's) is settled exactly once by whichever instance ends the job.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomToken } from '../../server/runtime/secrets.ts';
import { DEFAULT_RULES, tokensPerUnit, unitTokens } from '../../server/config/billing-rules.ts';
import { configFromEnvironment } from '../../server/boot/environment-config.ts';
import { parseConfig } from '../../server/boot/config.ts';
import { beginMetered } from '../../server/billing/metered.ts';
import { errors } from '../../server/runtime/errors.ts';
import { COUNTER_STORES } from '../helpers/billing-gateway.ts';
import { keyCounters, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { NO_BUCKETS } from '../helpers/usage.ts';

const config = `
providers:
  - { id: openai, type: openai, base_url: "http://127.0.0.1:9/v1", api_key: test-key }
  - { id: gemini, type: gemini, base_url: "http://127.0.0.1:9/v1beta", api_key: test-key }
models:
  - { id: chat-model, endpoint: chat, upstreams: [{ provider: openai, model: gpt-4o-mini }] }
  - { id: image-model, endpoint: images, token_multiplier: 2, upstreams: [{ provider: openai, model: gpt-image-1 }] }
  - { id: speech-model, endpoint: speech, billing: { tokens_per_1k_characters: 400 }, upstreams: [{ provider: openai, model: tts-1 }] }
  - { id: video-model, endpoint: video, token_multiplier: 0.5, upstreams: [{ provider: gemini, model: veo-3.1-generate-preview }] }
  - { id: stt-model, endpoint: transcription, billing: { tokens_per_audio_minute: 600 }, upstreams: [{ provider: openai, model: whisper-1 }] }
plans:
  - { id: free, rank: 0, daily_tokens: 100000, requests_per_minute: 1000, max_concurrent_jobs: 2 }
`;

describe('billing rules', () => {
  it('convert units to tokens, rounded up, with the defaults where the model names none', () => {
    expect(DEFAULT_RULES).toEqual({ tokens_per_image: 1000, tokens_per_video_second: 10_000, tokens_per_1k_characters: 250, tokens_per_audio_minute: 1000 });
    expect(unitTokens({ endpoint: 'images' }, 'image', 3)).toBe(3000);
    expect(unitTokens({ endpoint: 'speech' }, 'character', 4321)).toBe(1081); // 4.321 × 250 = 1080.25
    expect(unitTokens({ endpoint: 'speech', billing: { tokens_per_1k_characters: 400 } }, 'character', 4321)).toBe(1729); // 1728.4
    expect(unitTokens({ endpoint: 'transcription' }, 'audio_minute', 1.5)).toBe(1500);
    expect(unitTokens({ endpoint: 'video' }, 'video_second', 8)).toBe(80_000);
    expect(tokensPerUnit({ endpoint: 'chat' })).toBe(1);
    expect(tokensPerUnit({ endpoint: 'speech', billing: { tokens_per_1k_characters: 400 } })).toBe(0.4);
  });

  it('the built-in models (no config file) price their work relative to their siblings', () => {
    const { config } = configFromEnvironment({ OPENAI_API_KEY: 'k' });
    const rule = (id: string) => tokensPerUnit(config.models!.find((m) => m.id === id) as never);
    expect([rule('tts-1'), rule('tts-1-hd'), rule('whisper-1'), rule('gpt-4o-mini-transcribe'), rule('gpt-image-1'), rule('gpt-4o-mini')]).toEqual([0.25, 0.5, 1000, 500, 1000, 1]);
  });

  it("a rule for another endpoint's unit is a config error at its line", () => {
    const text = `providers:\n  - { id: openai, type: openai, api_key: k }\nmodels:\n  - id: tts\n    endpoint: speech\n    billing: { tokens_per_image: 5 }\n    upstreams: [{ provider: openai, model: tts-1 }]\n`;
    expect(() => parseConfig(text, 'c.yaml', {})).toThrow(/c\.yaml:6:\d+ models\[0\]\.billing\.tokens_per_image: tokens_per_image applies to images models; this model's endpoint is speech/);
  });
});

describe.each(COUNTER_STORES)('metered settlement on %s counters', (_name, env) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ config, env: { ...env } });
  });
  afterAll(() => gw?.close());

  const principalOf = async (key: string) => (await gw.services.keys.authenticate(key))!;
  const quota = async (keyId: string) => {
    const { settled, reserved } = await keyCounters(gw.services, keyId);
    return { settled, reserved };
  };
  const ledger = async (requestId: string) => {
    await gw.services.ledger.flush();
    return gw.services.db.prisma.usageRecord.findMany({ where: { requestId } });
  };

  it('the catalog shows each model’s unit and tokens per unit', async () => {
    const list: any = await (await gw.fetch('/v1/models', { key: await gw.newKey() })).json();
    const billing = Object.fromEntries(list.data.map((m: any) => [m.id, [m.billing, m.token_multiplier]]));
    // Bucket weights are 1 unless the config sets them (they weigh reported token usage).
    const weights = { input: 1, cache_read: 1, cache_write: 1, cache_write_1h: 1, audio_input: 1, image_input: 1, output: 1, reasoning: 1, audio_output: 1, image_output: 1 };
    expect(billing).toEqual({
      'chat-model': [{ unit: 'token', tokens_per_unit: 1, weights }, 1],
      'image-model': [{ unit: 'image', tokens_per_unit: 1000, weights }, 2],
      'speech-model': [{ unit: 'character', tokens_per_unit: 0.4, weights }, 1],
      'video-model': [{ unit: 'video_second', tokens_per_unit: 10_000, weights }, 0.5],
      'stt-model': [{ unit: 'audio_minute', tokens_per_unit: 600, weights }, 1],
    });
  });

  it('reserves the worst case × multiplier, settles units by the rule, and records unit and quantity', async () => {
    const key = await gw.newKey();
    const principal = await principalOf(key);
    const requestId = `req_${randomToken(8)}`;
    // Up to 4 images of image-model: 4 × 1000 × 2.
    const meter = await beginMetered(gw.services, { requestId, principal, model: 'image-model', endpoint: 'images', reserveTokens: unitTokens({ endpoint: 'images' }, 'image', 4) });
    expect(meter.reservation.amount).toBe(8000);
    expect(await quota(principal.keyId)).toEqual({ settled: 0, reserved: 8000 });
    expect(meter.headers['x-ratelimit-remaining-tokens']).toBe(String(100_000 - 8000));
    await meter.settle({ provider: 'openai', upstreamModel: 'gpt-image-1', usage: null, metered: { unit: 'image', quantity: 3 }, estimated: false });
    expect(await quota(principal.keyId)).toEqual({ settled: 6000, reserved: 0 });
    const [row] = await ledger(requestId);
    expect(row).toMatchObject({ endpoint: 'images', meteredUnit: 'image', meteredQuantity: 3, promptTokens: 0, completionTokens: 0, multiplier: 2, billedTokens: 6000n, status: 200 });
    const usage: any = await (await gw.fetch('/v1/usage', { key })).json();
    expect(usage.by_model).toEqual([
      { model: 'image-model', requests: 1, errors: 0, prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, reasoning_tokens: 0, billed_tokens: 6000, ...NO_BUCKETS, cost: null, unpriced_requests: 1, metered: { unit: 'image', quantity: 3 } },
    ]);
  });

  it('reported token usage wins over the unit rule', async () => {
    const principal = await principalOf(await gw.newKey());
    const requestId = `req_${randomToken(8)}`;
    const meter = await beginMetered(gw.services, { requestId, principal, model: 'stt-model', endpoint: 'transcriptions', reserveTokens: unitTokens({ endpoint: 'transcription', billing: { tokens_per_audio_minute: 600 } }, 'audio_minute', 2) });
    const usage = { inputTokens: 700, outputTokens: 90, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
    await meter.settle({ provider: 'openai', upstreamModel: 'gpt-4o-transcribe', usage, metered: { unit: 'audio_minute', quantity: 2 }, estimated: false });
    expect(await quota(principal.keyId)).toEqual({ settled: 790, reserved: 0 });
    expect((await ledger(requestId))[0]).toMatchObject({ meteredUnit: 'audio_minute', meteredQuantity: 2, promptTokens: 700, completionTokens: 90, billedTokens: 790n });
  });

  it('a failure before any output releases the reservation and bills nothing', async () => {
    const principal = await principalOf(await gw.newKey());
    const requestId = `req_${randomToken(8)}`;
    const meter = await beginMetered(gw.services, { requestId, principal, model: 'speech-model', endpoint: 'speech', reserveTokens: 2000 });
    expect(await quota(principal.keyId)).toEqual({ settled: 0, reserved: 2000 });
    await meter.fail(errors.invalid('nope', 'input'));
    expect(await quota(principal.keyId)).toEqual({ settled: 0, reserved: 0 });
    expect((await ledger(requestId)).map((r) => [Number(r.billedTokens), r.status, r.errorCode])).toEqual([[0, 400, 'invalid_parameter']]);
  });

  it('a reservation kept as data settles once, however many instances resume it', async () => {
    const principal = await principalOf(await gw.newKey());
    const requestId = `job_${randomToken(8)}`;
    const meter = await beginMetered(gw.services, { requestId, principal, model: 'video-model', endpoint: 'video', reserveTokens: unitTokens({ endpoint: 'video' }, 'video_second', 8), ttlMs: 3_600_000 });
    expect(meter.reservation.amount).toBe(40_000);
    const saved = JSON.parse(JSON.stringify(meter.reservation));
    const report = { requestId, model: 'video-model', endpoint: 'video' as const, provider: 'openai', upstreamModel: 'v', usage: null, metered: { unit: 'video_second' as const, quantity: 6 }, estimated: false, status: 200, errorCode: null, latencyMs: 1 };
    // Two instances (or one, before and after a restart) both end the job.
    await Promise.all([gw.services.billing.resume(saved).settle(report), gw.services.billing.resume(saved).settle(report)]);
    await gw.services.billing.resume(saved).settle(report);
    expect(await quota(principal.keyId)).toEqual({ settled: 30_000, reserved: 0 });
    expect(await ledger(requestId)).toHaveLength(1);
  });
});
