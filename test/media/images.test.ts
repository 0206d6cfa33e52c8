// Images and video (docs/api.md, "Images and video"; issue 18) through the official openai client and plain HTTP, against
// fake OpenAI, Gemini and OpenRouter upstreams: the hosted copies, every request rule, warnings,
// editing, billing, sync/async jobs, the 524 conversion, refusals and failures.
import { createOpenAI } from '@ai-sdk/openai';
import { generateImage } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { errorBody, pollJob, quotaOf, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { MP4, MP4_SILENT, PNG, PNG_REF, mediaConfig, startFakeMedia, type FakeMedia } from './fake-media.ts';

let fake: FakeMedia;
let gw: TestGateway;
let key: string;
let client: OpenAI;

beforeAll(async () => {
  fake = await startFakeMedia();
  gw = await startTestGateway({ config: mediaConfig(fake.url), env: { JOB_POLL_MS: '25' } });
  key = await gw.newKey();
  client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});
beforeEach(() => {
  fake.requests.length = 0;
  fake.pollsUntilDone = 3;
});

const post = (json: unknown, k = key) => gw.fetch('/v1/images/generations', { method: 'POST', key: k, json });
const last = (path: string) => [...fake.requests].reverse().find((r) => r.path === path)!;
const quota = (k: string) => quotaOf(gw, k);
const ledger = async (id: string) => {
  await gw.services.ledger.flush();
  const rows = await gw.services.db.prisma.usageRecord.findMany({ where: { requestId: id } });
  return rows.map((r) => ({ endpoint: r.endpoint, provider: r.provider, unit: r.meteredUnit, quantity: r.meteredQuantity, billed: Number(r.billedTokens), status: r.status, code: r.errorCode }));
};
const bytesOf = async (url: string) => {
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
};
const poll = (id: string, k = key) => pollJob(gw, `/v1/images/generations/${id}`, k);
const idOf = (url: string) => new URL(url).pathname;
const hosted = expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/v1\/files\/[A-Za-z0-9_-]+\.\d+\.[A-Za-z0-9_-]{22}$/);

describe('OpenAI images through the openai client', () => {
  it('url: a hosted copy, fetched without a key, with the bytes the upstream made; billed by the reported tokens', async () => {
    const before = await quota(key);
    const res = await client.images.generate({ model: 'gpt-image-1', prompt: 'a cat', response_format: 'url' }).withResponse();
    const img = res.data;
    expect(img.data).toEqual([{ url: hosted, content_type: 'image/png' }]);
    expect(img.usage).toMatchObject({ input_tokens: 50, output_tokens: 1056, total_tokens: 1106 });
    expect(res.response.headers.get('x-gateway-upstream')).toBe('openai');
    expect(res.response.headers.get('x-gateway-warnings')).toBeNull();
    // GPT image models reject response_format: never sent.
    expect(last('/openai/v1/images/generations').json).toEqual({ model: 'gpt-image-1', prompt: 'a cat' });
    expect(last('/openai/v1/images/generations').headers.authorization).toBe('Bearer openai-key');
    const file = await bytesOf(img.data![0]!.url!);
    expect(file).toEqual({ status: 200, type: 'image/png', bytes: PNG });
    // Served from the gateway's origin: sandboxed, never sniffed.
    const head = await fetch(img.data![0]!.url!);
    expect(head.headers.get('content-security-policy')).toBe("default-src 'none'; img-src 'self'; media-src 'self'; style-src 'unsafe-inline'; sandbox");
    expect(head.headers.get('x-content-type-options')).toBe('nosniff');
    // 1106 reported tokens × multiplier 2, not the per-image rule.
    expect(await quota(key)).toEqual({ settled: before.settled + 2212, reserved: 0 });
  });

  it('no response_format: url, and b64_json as well for a GPT image model id (clients written for those models read it)', async () => {
    let body: any = await (await post({ model: 'gpt-image-1', prompt: 'a cat' })).json();
    expect(body.data).toEqual([{ url: hosted, b64_json: PNG.toString('base64'), content_type: 'image/png' }]);
    body = await (await post({ model: 'dall-e-3', prompt: 'a cat' })).json();
    expect(body.data).toEqual([{ url: hosted, content_type: 'image/png', revised_prompt: 'revised: a cat' }]);
  });

  it('b64_json and its aliases: the image inline, and the hosted url beside it', async () => {
    for (const response_format of ['b64_json', 'base64', 'base64_json']) {
      const res = await post({ model: 'gpt-image-1', prompt: 'a cat', response_format });
      expect(res.status).toBe(200);
      const body: any = await res.json();
      expect(body.data).toEqual([{ url: hosted, b64_json: PNG.toString('base64'), content_type: 'image/png' }]);
      expect((await bytesOf(body.data[0].url)).bytes).toEqual(PNG);
    }
    const sdk = await client.images.generate({ model: 'gpt-image-1', prompt: 'a cat', response_format: 'b64_json' });
    expect(Buffer.from(sdk.data![0]!.b64_json!, 'base64')).toEqual(PNG);
  });

  it('size mapped to the nearest supported, quality low/medium forwarded, the rest stripped: each named in X-Gateway-Warnings', async () => {
    let res = await post({ model: 'gpt-image-1', prompt: 'p', size: '1000x1000', quality: 'low', style: 'vivid', negative_prompt: 'dogs', seed: 7 });
    expect(res.status).toBe(200);
    expect(last('/openai/v1/images/generations').json).toEqual({ model: 'gpt-image-1', prompt: 'p', size: '1024x1024', quality: 'low' });
    expect(res.headers.get('x-gateway-warnings')).toBe('size 1000x1000 changed to 1024x1024, the nearest this model makes; not supported by this model, stripped: negative_prompt, seed, style');

    res = await post({ model: 'gpt-image-1', prompt: 'p', aspect_ratio: '16:9', quality: 'high' });
    expect(last('/openai/v1/images/generations').json).toEqual({ model: 'gpt-image-1', prompt: 'p', size: '1536x1024' });
    expect(res.headers.get('x-gateway-warnings')).toBe("quality 'high' is not supported (only low or medium): stripped; aspect ratio 16:9 changed to size 1536x1024 (3:2), the nearest this model makes");

    res = await post({ model: 'gpt-image-1', prompt: 'p', size: '2:3', seconds: 4 });
    expect(last('/openai/v1/images/generations').json).toEqual({ model: 'gpt-image-1', prompt: 'p', size: '1024x1536' });
    expect(res.headers.get('x-gateway-warnings')).toBe('seconds applies to video models only: ignored; aspect ratio 2:3 sent as size 1024x1536');
  });

  it('dall-e-3: style forwarded, base64 asked of the upstream (its 60-minute URLs never reach the client), revised_prompt kept, quality stripped', async () => {
    const res = await post({ model: 'dall-e-3', prompt: 'p', style: 'natural', quality: 'medium', size: '16:9' });
    expect(res.status).toBe(200);
    expect(last('/openai/v1/images/generations').json).toEqual({ model: 'dall-e-3', prompt: 'p', size: '1792x1024', style: 'natural', response_format: 'b64_json' });
    expect(res.headers.get('x-gateway-warnings')).toBe('aspect ratio 16:9 changed to size 1792x1024 (7:4), the nearest this model makes; not supported by this model, stripped: quality');
    const body: any = await res.json();
    expect(body.data).toEqual([{ url: hosted, content_type: 'image/png', revised_prompt: 'revised: p' }]);
  });

  it('image_url → /images/edits as multipart (image[] for several), data URIs decoded', async () => {
    const dataUri = `data:image/png;base64,${PNG.toString('base64')}`;
    const res = await client.images.generate({ model: 'gpt-image-1', prompt: 'merge them', size: '1024x1536', image_url: [dataUri, `data:image/png;base64,${PNG_REF.toString('base64')}`] } as never);
    expect(res.data![0]!.url).toEqual(hosted);
    const up = last('/openai/v1/images/edits');
    expect(up.form!.fields).toEqual({ model: 'gpt-image-1', prompt: 'merge them', size: '1024x1536' });
    expect(up.form!.files.map((f) => [f.name, f.filename, f.type, f.bytes])).toEqual([
      ['image[]', 'image-1.png', 'image/png', PNG],
      ['image[]', 'image-2.png', 'image/png', PNG_REF],
    ]);
    const one = await post({ model: 'gpt-image-1', prompt: 'edit', image_url: dataUri });
    expect(one.status).toBe(200);
    expect(last('/openai/v1/images/edits').form!.files.map((f) => f.name)).toEqual(['image']);
  });

  it('a model that cannot edit, too many references, and unusable references: 400 naming the model or the reference', async () => {
    let res = await post({ model: 'dall-e-3', prompt: 'p', image_url: `data:image/png;base64,${PNG.toString('base64')}` });
    expect(res.status).toBe(400);
    expect(await errorBody(res)).toEqual({ message: "The model 'dall-e-3' cannot edit images or take reference images: send no image_url, or use a model that can.", type: 'invalid_request_error', code: 'model_cannot_edit', param: 'image_url' });
    res = await post({ model: 'gpt-image-1', prompt: 'p', image_url: Array(6).fill(`${fake.url}/refs/a.png`) });
    expect(res.status).toBe(400);
    expect((await errorBody(res)).param).toBe('image_url');
    res = await post({ model: 'gpt-image-1', prompt: 'p', image_url: ['data:text/plain;base64,aGk=', 'https://127.0.0.1:1/a.png'] });
    expect(res.status).toBe(400);
    expect(await errorBody(res)).toEqual({ message: 'image_url[0] is a data: URI that is not a base64-encoded image (data:image/<type>;base64,...).', type: 'invalid_request_error', code: 'invalid_image_url', param: 'image_url[0]' });
    // HTTPS references are downloaded through the SSRF guard; one that cannot be fetched is the client's to fix.
    res = await post({ model: 'gpt-image-1', prompt: 'p', image_url: 'https://127.0.0.1:1/a.png' });
    expect(res.status).toBe(400);
    expect(await errorBody(res)).toEqual({ message: 'Cannot use image URL https://127.0.0.1:1/a.png: download failed (ECONNREFUSED).', type: 'invalid_request_error', code: 'invalid_image_url', param: 'image_url' });
    expect(fake.requests.filter((r) => r.path.startsWith('/openai/'))).toEqual([]);
  });

  it('a content-policy refusal: 400 content_policy_violation with the upstream reason, nothing billed', async () => {
    const k = await gw.newKey();
    const res = await post({ model: 'gpt-image-1', prompt: 'something forbidden' }, k);
    expect(res.status).toBe(400);
    expect(await errorBody(res)).toEqual({
      message: "The upstream provider 'openai' refused the request under its content policy: Your request was rejected by the safety system. safety_violations=[sexual].",
      type: 'invalid_request_error',
      code: 'content_policy_violation',
      param: 'prompt',
    });
    expect(await quota(k)).toEqual({ settled: 0, reserved: 0 });
  });
});

describe('the Vercel AI SDK', () => {
  it('generateImage with the OpenAI provider: GPT image models (no response_format sent) and others (b64_json asked)', async () => {
    const openai = createOpenAI({ baseURL: `${gw.url}/v1`, apiKey: key });
    let r = await generateImage({ model: openai.image('gpt-image-1'), prompt: 'a cat', size: '1536x1024', providerOptions: { openai: { quality: 'low' } } });
    expect(Buffer.from(r.image.uint8Array)).toEqual(PNG);
    expect(r.image.mediaType).toBe('image/png');
    expect(r.usage).toMatchObject({ inputTokens: 50, outputTokens: 1056 });
    expect(last('/openai/v1/images/generations').json).toEqual({ model: 'gpt-image-1', prompt: 'a cat', size: '1536x1024', quality: 'low' });
    r = await generateImage({ model: openai.image('nano-banana-pro'), prompt: 'a cat', aspectRatio: '16:9' });
    expect(Buffer.from(r.image.uint8Array)).toEqual(PNG);
  });
});

describe('request rules', () => {
  it.each([
    [{ n: 2 }, 'n'],
    [{ size: '0x512' }, 'size'],
    [{ size: '1:20' }, 'size'],
    [{ size: '9000x9000' }, 'size'],
    [{ size: 'big' }, 'size'],
    [{ size: '1024x1024', aspect_ratio: '16:9' }, 'aspect_ratio'],
    [{ aspect_ratio: '16x9' }, 'aspect_ratio'],
    [{ response_format: 'png' }, 'response_format'],
    [{ style: 'anime' }, 'style'],
  ])('%j → 400 with param %s', async (extra, param) => {
    const res = await post({ model: 'gpt-image-1', prompt: 'p', ...extra });
    expect(res.status).toBe(400);
    const e = await errorBody(res);
    expect(e.type).toBe('invalid_request_error');
    expect(e.param).toBe(param);
  });

  it('a text model or an unknown one: 400 naming it', async () => {
    let res = await post({ model: 'gpt-4o-mini', prompt: 'p' });
    expect(await errorBody(res)).toEqual({ message: "The model 'gpt-4o-mini' is a chat model, not an images model.", type: 'invalid_request_error', code: 'model_not_supported', param: 'model' });
    res = await post({ model: 'nope', prompt: 'p' });
    expect(res.status).toBe(400);
    expect(await errorBody(res)).toMatchObject({ code: 'model_not_found', param: 'model' });
  });
});

describe('Gemini image models', () => {
  it('gemini-3 image: ratio + image size, seed forwarded, references inline; interim thought images and their multi-megabyte signatures dropped; reported tokens billed', async () => {
    const k = await gw.newKey();
    const res = await post({ model: 'nano-banana-pro', prompt: 'a moon cat', size: '1920x1080', seed: 42, response_format: 'b64_json', image_url: `data:image/png;base64,${PNG_REF.toString('base64')}` }, k);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gateway-warnings')).toBe('size 1920x1080 sent as aspect ratio 16:9');
    const up = last('/gemini/v1beta/models/gemini-3-pro-image-preview:generateContent');
    expect(up.headers['x-goog-api-key']).toBe('gemini-key');
    expect(up.json).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'a moon cat' }, { inlineData: { mimeType: 'image/png', data: PNG_REF.toString('base64') } }] }],
      generationConfig: { responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '16:9', imageSize: '2K' }, seed: 42 },
    });
    const body: any = await res.json();
    expect(body.data).toEqual([{ url: hosted, b64_json: PNG.toString('base64'), content_type: 'image/png' }]);
    expect(JSON.stringify(body).length).toBeLessThan(2000);
    expect(body.usage).toMatchObject({ promptTokenCount: 8, candidatesTokenCount: 1120 });
    expect(await quota(k)).toEqual({ settled: 1128, reserved: 0 });
  });

  it('gemini-2.5-flash-image: the nearest ratio, no size option, strips what it cannot take', async () => {
    const res = await post({ model: 'flash-image', prompt: 'p', size: '1000x1000', quality: 'medium', negative_prompt: 'x' });
    expect(res.status).toBe(200);
    expect(last('/gemini/v1beta/models/gemini-2.5-flash-image:generateContent').json!.generationConfig).toEqual({ responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '1:1' } });
    expect(res.headers.get('x-gateway-warnings')).toBe('size 1000x1000 sent as aspect ratio 1:1; size: this model makes about 1024 pixels on the long side, not 1000; not supported by this model, stripped: negative_prompt, quality');
  });

  it('an in-band safety finish is a content-policy refusal; an answer without an image is a provider error', async () => {
    let res = await post({ model: 'flash-image', prompt: 'forbidden' });
    expect(res.status).toBe(400);
    expect(await errorBody(res)).toEqual({ message: "The upstream provider 'gemini' refused the request under its content policy: no image was generated (finishReason IMAGE_SAFETY)", type: 'invalid_request_error', code: 'content_policy_violation', param: 'prompt' });
    res = await post({ model: 'flash-image', prompt: 'noimage' });
    expect(res.status).toBe(502);
    expect(await errorBody(res)).toMatchObject({ type: 'provider_error', code: 'all_upstreams_failed', message: expect.stringContaining('answered without an image (finishReason STOP)') });
  });
});

describe('OpenRouter image output (chat modalities)', () => {
  it('aspect ratio and image size in image_config, the data-URI image hosted, usage billed', async () => {
    const k = await gw.newKey();
    const res = await post({ model: 'or-image', prompt: 'a fox', size: '2048x1152', seed: 3 }, k);
    expect(res.status).toBe(200);
    const up = last('/openrouter/api/v1/chat/completions');
    expect(up.headers.authorization).toBe('Bearer or-key');
    expect(up.json).toEqual({ model: 'google/gemini-2.5-flash-image', messages: [{ role: 'user', content: 'a fox' }], modalities: ['image', 'text'], image_config: { aspect_ratio: '16:9', image_size: '2K' }, seed: 3 });
    const body: any = await res.json();
    expect((await bytesOf(body.data[0].url)).bytes).toEqual(PNG);
    expect(await quota(k)).toEqual({ settled: 1302, reserved: 0 });
  });

  it('an error body naming moderation (on a 200) is a content-policy refusal', async () => {
    const res = await post({ model: 'or-image', prompt: 'forbidden' });
    expect(res.status).toBe(400);
    expect(await errorBody(res)).toEqual({ message: "The upstream provider 'openrouter' refused the request under its content policy: reported an error: Input was flagged by moderation", type: 'invalid_request_error', code: 'content_policy_violation', param: 'prompt' });
    expect(fake.requests.filter((r) => r.path.endsWith('/chat/completions'))).toHaveLength(1);
  });
});

describe('async image jobs and the 524 conversion', () => {
  it('sync: false → 202 job; done, its result holds the same data[] (hosted URL); another key gets 403, a wrong id 404', async () => {
    const res = await post({ model: 'gpt-image-1', prompt: 'later', sync: false, size: '1000x1000', response_format: 'url' });
    expect(res.status).toBe(202);
    const job: any = await res.json();
    expect(job).toMatchObject({ object: 'image.generation.job', status: 'queued', model: 'gpt-image-1', result: null, download_url: null });
    const done = await poll(job.id);
    expect(done).toMatchObject({ status: 'done', error: null, warnings: ['size 1000x1000 changed to 1024x1024, the nearest this model makes'] });
    expect(done.result.data).toEqual([{ url: hosted, content_type: 'image/png' }]);
    expect((await bytesOf(done.result.data[0].url)).bytes).toEqual(PNG);
    expect(await ledger(job.id)).toEqual([{ endpoint: 'images', provider: 'openai', unit: 'image', quantity: 1, billed: 2212, status: 200, code: null }]);
    const other = await gw.newKey();
    const denied = await gw.fetch(`/v1/images/generations/${job.id}`, { key: other });
    expect(denied.status).toBe(403);
    expect((await errorBody(denied)).code).toBe('unauthorized_job_access');
    const missing = await gw.fetch('/v1/images/generations/job_nope', { key });
    expect(missing.status).toBe(404);
    expect((await errorBody(missing)).code).toBe('job_not_found');
  });

  it('a sync request past jobs.sync_timeout_seconds answers 524 naming its job, which then holds the result, billed once', async () => {
    const k = await gw.newKey();
    const res = await post({ model: 'gpt-image-1', prompt: 'slow:2500 a big one' }, k);
    expect(res.status).toBe(524);
    const body: any = await res.json();
    expect(body.error).toEqual({
      message: `The image was not ready within 1.5 s. It is still being made as job ${body.error.job_id}: poll GET /v1/images/generations/${body.error.job_id} for the result (billed once).`,
      type: 'server_error',
      code: 'generation_timeout',
      param: null,
      job_id: expect.stringMatching(/^job_/),
    });
    expect(body.job).toMatchObject({ id: body.error.job_id, status: 'in_progress', object: 'image.generation.job' });
    expect((await quota(k)).reserved).toBe(2000);
    const done = await poll(body.error.job_id, k);
    expect(done.status).toBe('done');
    expect((await bytesOf(done.result.data[0].url)).bytes).toEqual(PNG);
    expect(await quota(k)).toEqual({ settled: 2212, reserved: 0 });
    expect(await ledger(body.error.job_id)).toHaveLength(1);
  });

  it('a sync request that finished is kept as a done job under its own id', async () => {
    const res = await post({ model: 'gpt-image-1', prompt: 'p' });
    const body: any = await res.json();
    const token = idOf(body.data[0].url);
    const rows = await gw.services.db.prisma.job.findMany({ where: { status: 'done', kind: 'images.generation' }, orderBy: { createdAt: 'desc' }, take: 1 });
    expect(rows[0]!.outputKey).toMatch(/^jobs\/job_[A-Za-z0-9]+\/output$/);
    const polled = await (await gw.fetch(`/v1/images/generations/${rows[0]!.id}`, { key })).json();
    expect(idOf((polled as any).result.data[0].url)).toMatch(/^\/v1\/files\//);
    expect(token).toMatch(/^\/v1\/files\//);
  });
});

describe('video', () => {
  it('Veo: a job through several poll rounds; the file downloaded with the key (redirect followed without it), hosted, its duration read from the container and billed', async () => {
    const k = await gw.newKey();
    fake.pollsUntilDone = 4;
    const res = await post({ model: 'veo', prompt: 'waves', seconds: 5, size: '720x1280', negative_prompt: 'people', seed: 1, sync: true }, k);
    expect(res.status).toBe(202);
    expect(res.headers.get('x-gateway-warnings')).toBe('sync: video models always run as a job');
    const job: any = await res.json();
    expect(job.object).toBe('video.generation.job');
    // Reserved at submission: the longest video (10 s) × 1000 tokens a second.
    expect(await quota(k)).toEqual({ settled: 0, reserved: 10_000 });
    const done = await poll(job.id, k);
    expect(done).toMatchObject({ object: 'video.generation.job', status: 'done' });
    expect(done.result.data).toEqual([{ url: hosted, content_type: 'video/mp4', duration_seconds: 2 }]);
    expect(done.warnings).toEqual([
      'sync: video models always run as a job',
      'seconds 5 changed to 6, the nearest duration this model makes',
      'size 720x1280 sent as aspect ratio 9:16',
      'not supported by this model, stripped: seed',
    ]);
    const start = last('/gemini/v1beta/models/veo-3.1-generate-preview:predictLongRunning');
    expect(start.json).toEqual({ instances: [{ prompt: 'waves' }], parameters: { durationSeconds: 6, sampleCount: 1, aspectRatio: '9:16', resolution: '720p', negativePrompt: 'people' } });
    const polls = fake.requests.filter((r) => /operations\/op\d+$/.test(r.path));
    expect(polls).toHaveLength(4);
    expect(polls.every((p) => p.headers['x-goog-api-key'] === 'gemini-key')).toBe(true);
    expect(fake.requests.find((r) => r.path.includes(':download'))!.headers['x-goog-api-key']).toBe('gemini-key');
    expect(fake.requests.find((r) => r.path.startsWith('/storage/'))!.headers['x-goog-api-key']).toBeUndefined();
    const file = await bytesOf(done.result.data[0].url);
    expect(file).toEqual({ status: 200, type: 'video/mp4', bytes: MP4 });
    expect(await quota(k)).toEqual({ settled: 2000, reserved: 0 });
    expect(await ledger(job.id)).toEqual([{ endpoint: 'video', provider: 'gemini', unit: 'video_second', quantity: 2, billed: 2000, status: 200, code: null }]);
  });

  it('Veo: a reference image becomes the first frame; seconds clamped to 10 then to 8', async () => {
    const res = await post({ model: 'veo', prompt: 'p', seconds: 30, image_url: `data:image/png;base64,${PNG.toString('base64')}` });
    const done = await poll(((await res.json()) as any).id);
    expect(done.status).toBe('done');
    expect(done.warnings).toEqual(['seconds 30 clamped to 10', 'seconds 10 changed to 8, the nearest duration this model makes']);
    expect(last('/gemini/v1beta/models/veo-3.1-generate-preview:predictLongRunning').json!.instances).toEqual([{ prompt: 'p', image: { bytesBase64Encoded: PNG.toString('base64'), mimeType: 'image/png' } }]);
  });

  it('Veo: the content filter\'s "success" is a content-policy failure, an operation error a provider error; neither billed', async () => {
    const k = await gw.newKey();
    const filtered = await poll(((await (await post({ model: 'veo', prompt: 'forbidden' }, k)).json()) as any).id, k);
    expect(filtered).toMatchObject({ status: 'failed', result: null, error: { type: 'invalid_request_error', code: 'content_policy_violation', message: "The upstream provider 'gemini' refused the request under its content policy: the video was filtered: Unsafe content (support code 58061214)" } });
    const broken = await poll(((await (await post({ model: 'veo', prompt: 'broken' }, k)).json()) as any).id, k);
    expect(broken).toMatchObject({ status: 'failed', error: { type: 'provider_error', code: 'upstream_error', message: "provider 'gemini': the video failed: Internal error while generating the video (code 13)" } });
    expect(await quota(k)).toEqual({ settled: 0, reserved: 0 });
    // Both recorded as failed requests, billed nothing.
    expect((await ledger(filtered.id)).map((r) => [r.billed, r.status, r.code])).toEqual([[0, 400, 'content_policy_violation']]);
    expect((await ledger(broken.id)).map((r) => [r.billed, r.status, r.code])).toEqual([[0, 502, 'upstream_error']]);
  });

  it('Veo: a failed check on the way is retried at the next one', async () => {
    const done = await poll(((await (await post({ model: 'veo', prompt: 'flaky waves' })).json()) as any).id);
    expect(done.status).toBe('done');
  });

  it('Veo: a start the upstream rejects fails the job with its reason', async () => {
    const done = await poll(((await (await post({ model: 'veo', prompt: 'rejected' })).json()) as any).id);
    expect(done).toMatchObject({ status: 'failed', error: { code: 'upstream_invalid_request', message: expect.stringContaining('durationSeconds is out of range') } });
  });

  it('OpenRouter video: started, polled through pending and in_progress, the file fetched with the key', async () => {
    const res = await post({ model: 'or-video', prompt: 'a sunrise', seconds: 4.4, aspect_ratio: '16:9' });
    const done = await poll(((await res.json()) as any).id);
    // A silent video whose movie header follows its media data: the duration still comes from the file.
    expect(done).toMatchObject({ status: 'done', result: { data: [{ url: hosted, content_type: 'video/mp4', duration_seconds: 3 }] } });
    expect(last('/openrouter/api/v1/videos').json).toEqual({ model: 'google/veo-3.1', prompt: 'a sunrise', duration: 4, aspect_ratio: '16:9' });
    expect(done.warnings).toEqual(['seconds 4.4 changed to 4']);
    expect((await bytesOf(done.result.data[0].url)).bytes).toEqual(MP4_SILENT);
    expect(await ledger(done.id)).toEqual([{ endpoint: 'video', provider: 'openrouter', unit: 'video_second', quantity: 3, billed: 3000, status: 200, code: null }]);
    // A file whose duration cannot be read is billed as the duration asked for, and says so.
    const garbled = await poll(((await (await post({ model: 'or-video', prompt: 'garbled', seconds: 6 })).json()) as any).id);
    expect(garbled.result.data[0].duration_seconds).toBe(6);
    expect(garbled.warnings).toEqual(["the video's duration could not be read from the file: billed as the 6 s requested"]);
    expect((await ledger(garbled.id))[0]).toMatchObject({ quantity: 6, billed: 6000 });
    const failed = await poll(((await (await post({ model: 'or-video', prompt: 'broken' })).json()) as any).id);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'upstream_error', message: "provider 'openrouter': the video failed: The provider could not generate the video" } });
  });
});
