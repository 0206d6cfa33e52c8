// Fake OpenAI, Gemini and OpenRouter media upstreams, shaped after the vendors' API references and
// public recordings (the @google/genai and Vercel AI SDK test data: Gemini image parts with thought signatures, Veo
// operations with their three ends, OpenRouter's `message.images`). Prompts steer them:
// `forbidden` → a content-policy refusal, `slow:<ms>` → a late answer, `broken` → a failure.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

type Json = Record<string, any>;
export type MediaRecorded = { method: string; path: string; headers: IncomingMessage['headers']; json: Json | null; form: { fields: Record<string, string>; files: { name: string; filename: string; type: string; bytes: Buffer }[] } | null };

/** A real 1×1 PNG (and a second, different one for references). */
export const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
export const PNG_REF = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
/** A 2-second MP4 (64×36, with a sine audio track), made once with ffmpeg. */
export const MP4 = readFileSync(new URL('./fixtures/clip-2s.mp4', import.meta.url));
/** A 3-second silent MP4 whose movie header comes after the media data (not "fast start"). */
export const MP4_SILENT = readFileSync(new URL('./fixtures/clip-3s-silent.mp4', import.meta.url));
/** Gemini 3 image parts carry multi-megabyte thought signatures (vercel/ai 9fc22eec99): 3 MB here. */
const BIG_SIGNATURE = 'c2ln'.repeat(750_000);

export type FakeMedia = { url: string; requests: MediaRecorded[]; pollsUntilDone: number; close(): Promise<void>; server: Server };

const slowOf = (prompt: unknown) => Number(/slow:(\d+)/.exec(String(prompt ?? ''))?.[1] ?? 0);

export async function startFakeMedia(): Promise<FakeMedia> {
  const requests: MediaRecorded[] = [];
  const polls = new Map<string, number>();
  const operations = new Map<string, string>(); // operation → prompt
  let n = 0;
  const fake: FakeMedia = {
    url: '',
    requests,
    pollsUntilDone: 3,
    server: null as unknown as Server,
    close: () => new Promise((r) => fake.server.close(() => r())),
  };
  fake.server = createServer((req, res) => void (async () => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const type = String(req.headers['content-type'] ?? '');
    const path = req.url ?? '/';
    const rec: MediaRecorded = { method: req.method ?? 'GET', path, headers: req.headers, json: null, form: null };
    if (type.startsWith('application/json') && raw.length) rec.json = JSON.parse(raw.toString('utf8'));
    if (type.startsWith('multipart/form-data')) {
      const form = await new Response(raw, { headers: { 'content-type': type } }).formData();
      rec.form = { fields: {}, files: [] };
      for (const [name, v] of form.entries()) {
        if (typeof v === 'string') rec.form.fields[name] = v;
        else rec.form.files.push({ name, filename: v.name, type: v.type, bytes: Buffer.from(await v.arrayBuffer()) });
      }
    }
    requests.push(rec);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    const body = rec.json ?? {};
    const prompt = String(body.prompt ?? rec.form?.fields.prompt ?? body.instances?.[0]?.prompt ?? body.contents?.[0]?.parts?.[0]?.text ?? JSON.stringify(body.messages ?? ''));
    await sleep(slowOf(prompt));

    // ---- OpenAI ----
    if (path === '/openai/v1/images/generations' || path === '/openai/v1/images/edits') {
      const model = body.model ?? rec.form?.fields.model;
      if (prompt.includes('forbidden')) {
        return send(400, { error: { message: 'Your request was rejected by the safety system. safety_violations=[sexual].', type: 'image_generation_user_error', param: null, code: 'moderation_blocked', moderation_details: { moderation_stage: 'input', categories: ['sexual'] } } });
      }
      if (prompt.includes('broken')) return send(500, { error: { message: 'The server had an error', type: 'server_error', param: null, code: null } });
      if (String(model).startsWith('dall-e')) return send(200, { created: 1770935251, data: [{ b64_json: PNG.toString('base64'), revised_prompt: `revised: ${prompt}` }] });
      return send(200, {
        created: 1770935251,
        data: [{ b64_json: PNG.toString('base64') }],
        background: 'opaque',
        output_format: 'png',
        quality: 'medium',
        size: body.size ?? rec.form?.fields.size ?? '1024x1024',
        usage: { input_tokens: 50, input_tokens_details: { text_tokens: 10, image_tokens: 40 }, output_tokens: 1056, output_tokens_details: { image_tokens: 1056, text_tokens: 0 }, total_tokens: 1106 },
      });
    }

    // ---- Gemini ----
    let m = /^\/gemini\/v1beta\/models\/([^:]+):generateContent$/.exec(path);
    if (m) {
      if (prompt.includes('forbidden')) return send(200, { candidates: [{ finishReason: 'IMAGE_SAFETY', index: 0 }], usageMetadata: { promptTokenCount: 8, totalTokenCount: 8 } });
      if (prompt.includes('noimage')) return send(200, { candidates: [{ content: { parts: [{ text: 'I cannot draw that.' }], role: 'model' }, finishReason: 'STOP', index: 0 }] });
      const gemini3 = m[1]!.includes('gemini-3');
      return send(200, {
        candidates: [
          {
            content: {
              role: 'model',
              parts: [
                ...(gemini3 ? [{ inlineData: { mimeType: 'image/png', data: PNG_REF.toString('base64') }, thought: true }] : []),
                { text: 'Here is your image.' },
                { inlineData: { mimeType: 'image/png', data: PNG.toString('base64') }, ...(gemini3 ? { thoughtSignature: BIG_SIGNATURE } : {}) },
              ],
            },
            finishReason: 'STOP',
            index: 0,
          },
        ],
        usageMetadata: { promptTokenCount: 8, candidatesTokenCount: 1120, totalTokenCount: 1128, candidatesTokensDetails: [{ modality: 'IMAGE', tokenCount: 1120 }] },
        modelVersion: m[1],
      });
    }
    m = /^\/gemini\/v1beta\/models\/([^:]+):predictLongRunning$/.exec(path);
    if (m) {
      if (prompt.includes('rejected')) return send(400, { error: { code: 400, message: 'durationSeconds is out of range', status: 'INVALID_ARGUMENT' } });
      const name = `models/${m[1]}/operations/op${++n}`;
      operations.set(name, prompt);
      return send(200, { name });
    }
    m = /^\/gemini\/v1beta\/(models\/[^/]+\/operations\/op\d+)$/.exec(path);
    if (m) {
      const name = m[1]!;
      const count = (polls.get(name) ?? 0) + 1;
      polls.set(name, count);
      if (count < fake.pollsUntilDone) return send(200, { name, ...(count > 1 ? { done: false } : {}) });
      const p = operations.get(name) ?? '';
      if (p.includes('flaky') && count === fake.pollsUntilDone) return send(503, { error: { code: 503, message: 'unavailable', status: 'UNAVAILABLE' } });
      if (p.includes('forbidden')) {
        return send(200, { name, done: true, response: { '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse', generateVideoResponse: { raiMediaFilteredCount: 1, raiMediaFilteredReasons: ['Unsafe content (support code 58061214)'] } } });
      }
      if (p.includes('broken')) return send(200, { name, done: true, error: { code: 13, message: 'Internal error while generating the video' } });
      const id = name.split('/').pop();
      return send(200, {
        name,
        done: true,
        response: { '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse', generateVideoResponse: { generatedSamples: [{ video: { uri: `${fake.url}/gemini/v1beta/files/${id}:download?alt=media` } }] } },
      });
    }
    m = /^\/gemini\/v1beta\/files\/([^:]+):download\?alt=media$/.exec(path);
    if (m) {
      if (req.headers['x-goog-api-key'] !== 'gemini-key') return send(403, { error: { code: 403, message: 'no key', status: 'PERMISSION_DENIED' } });
      // The file service answers with a redirect to the bytes.
      res.writeHead(302, { location: `${fake.url.replace('127.0.0.1', 'localhost')}/storage/${m[1]}.mp4` });
      return res.end();
    }
    if (/^\/storage\/[^/]+\.mp4$/.test(path)) {
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(MP4.length) });
      return res.end(MP4);
    }

    // ---- OpenRouter ----
    if (path === '/openrouter/api/v1/chat/completions') {
      if (prompt.includes('forbidden')) return send(200, { error: { code: 403, message: 'Input was flagged by moderation' } });
      return send(200, {
        id: 'gen-1',
        object: 'chat.completion',
        created: 1770935251,
        model: body.model,
        choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: '', images: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` } }] } }],
        usage: { prompt_tokens: 12, completion_tokens: 1290, total_tokens: 1302, completion_tokens_details: { image_tokens: 1290 }, cost: 0.039 },
      });
    }
    if (path === '/openrouter/api/v1/videos' && rec.method === 'POST') {
      const id = `vid${++n}`;
      operations.set(id, prompt);
      return send(200, { id, generation_id: `gen-${id}`, polling_url: `/api/v1/videos/${id}`, status: 'pending' });
    }
    m = /^\/openrouter\/api\/v1\/videos\/(vid\d+)$/.exec(path);
    if (m) {
      const id = m[1]!;
      const count = (polls.get(id) ?? 0) + 1;
      polls.set(id, count);
      if (count < fake.pollsUntilDone) return send(200, { id, status: count === 1 ? 'pending' : 'in_progress' });
      if ((operations.get(id) ?? '').includes('broken')) return send(200, { id, status: 'failed', error: 'The provider could not generate the video' });
      return send(200, { id, status: 'completed', unsigned_urls: [`https://example.invalid/${id}.mp4`], usage: { cost: 0.5, is_byok: false } });
    }
    m = /^\/openrouter\/api\/v1\/videos\/(vid\d+)\/content\?index=0$/.exec(path);
    if (m) {
      if (req.headers.authorization !== 'Bearer or-key') return send(401, { error: { code: 401, message: 'no key' } });
      res.writeHead(200, { 'content-type': 'video/mp4' });
      return res.end((operations.get(m[1]!) ?? '').includes('garbled') ? Buffer.from('not a video at all') : MP4_SILENT);
    }

    // ---- reference images served over HTTP ----
    if (path === '/refs/a.png') {
      res.writeHead(200, { 'content-type': 'image/png' });
      return res.end(PNG_REF);
    }
    send(404, { error: { message: `fake media: no route for ${rec.method} ${path}` } });
  })());
  await new Promise<void>((r) => fake.server.listen(0, '127.0.0.1', r));
  fake.url = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
  return fake;
}

export const mediaConfig = (url: string, extra = '') => `
providers:
  - { id: openai, type: openai, base_url: "${url}/openai/v1", api_key: openai-key }
  - { id: gemini, type: gemini, base_url: "${url}/gemini/v1beta", api_key: gemini-key }
  - { id: openrouter, type: openai-compatible, base_url: "${url}/openrouter/api/v1", api_key: or-key }
models:
  - { id: gpt-image-1, endpoint: images, token_multiplier: 2, upstreams: [{ provider: openai, model: gpt-image-1 }] }
  - { id: dall-e-3, endpoint: images, upstreams: [{ provider: openai, model: dall-e-3 }] }
  - { id: nano-banana-pro, endpoint: images, billing: { tokens_per_image: 1500 }, upstreams: [{ provider: gemini, model: gemini-3-pro-image-preview }] }
  - { id: flash-image, endpoint: images, upstreams: [{ provider: gemini, model: gemini-2.5-flash-image }] }
  - { id: or-image, endpoint: images, upstreams: [{ provider: openrouter, model: google/gemini-2.5-flash-image }] }
  - { id: veo, endpoint: video, billing: { tokens_per_video_second: 1000 }, upstreams: [{ provider: gemini, model: veo-3.1-generate-preview }] }
  - { id: or-video, endpoint: video, billing: { tokens_per_video_second: 1000 }, upstreams: [{ provider: openrouter, model: google/veo-3.1 }] }
  - { id: gpt-4o-mini, endpoint: chat, upstreams: [{ provider: openai, model: gpt-4o-mini }] }
plans:
  - { id: free, rank: 0, daily_tokens: 1000000, requests_per_minute: 10000, max_concurrent_jobs: 4 }
allow_private_image_urls: true
jobs: { retention_hours: 1, poll_seconds: 0.05, sync_timeout_seconds: 1.5 }
${extra}`;
