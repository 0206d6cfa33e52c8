// Fake speech upstreams after the vendors' API references (Gemini's speech generation, ElevenLabs'
// text-to-speech stream, OpenAI's audio/speech): OpenAI and ElevenLabs stream their audio in timed chunks, Gemini answers base64 PCM.
// Input text steers them: `refuse` → a 400, `broken` → a 500, `slow:<ms>` → late headers.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

type Json = Record<string, any>;
export type SpeechRecorded = { method: string; path: string; headers: IncomingMessage['headers']; json: Json | null };

/** Recognisable "audio": an MP3 frame header and a counter, in three chunks. */
export const audioChunks = (tag: string) => [Buffer.from(`\xff\xfb\x90\x00${tag}-1|`, 'latin1'), Buffer.from(`${tag}-2|`), Buffer.from(`${tag}-3`)];
export const audioBytes = (tag: string) => Buffer.concat(audioChunks(tag));

/** One second of a 440 Hz tone, 24 kHz mono signed 16-bit little-endian: what Gemini TTS answers. */
export function pcmTone(seconds = 1, rate = 24_000): Buffer {
  const pcm = Buffer.alloc(seconds * rate * 2);
  for (let i = 0; i < seconds * rate; i++) pcm.writeInt16LE(Math.round(Math.sin((2 * Math.PI * 440 * i) / rate) * 12_000), i * 2);
  return pcm;
}

export type FakeSpeech = { url: string; requests: SpeechRecorded[]; chunkDelayMs: number; close(): Promise<void> };

export async function startFakeSpeech(): Promise<FakeSpeech> {
  const requests: SpeechRecorded[] = [];
  let server: Server;
  const fake: FakeSpeech = { url: '', requests, chunkDelayMs: 0, close: () => new Promise((r) => server.close(() => r())) };
  server = createServer((req, res) => void (async () => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const json = raw ? (JSON.parse(raw) as Json) : null;
    const path = req.url ?? '/';
    requests.push({ method: req.method ?? 'GET', path, headers: req.headers, json });
    const text = String(json?.input ?? json?.text ?? json?.contents?.[0]?.parts?.[0]?.text ?? '');
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    await sleep(Number(/slow:(\d+)/.exec(text)?.[1] ?? 0));
    if (text.includes('refuse')) return send(400, { error: { message: 'Input refused by the fake.', type: 'invalid_request_error', param: null, code: null } });
    if (text.includes('broken')) return send(500, { error: { message: 'fake outage' } });
    const stream = async (type: string, tag: string) => {
      res.writeHead(200, { 'content-type': type, 'transfer-encoding': 'chunked' });
      for (const c of audioChunks(tag)) {
        res.write(c);
        await sleep(fake.chunkDelayMs);
      }
      res.end();
    };
    if (path === '/openai/v1/audio/speech') return stream(json!.response_format === 'flac' ? 'audio/flac' : 'audio/mpeg', `openai-${json!.voice}`);
    let m = /^\/elevenlabs\/v1\/text-to-speech\/([^/]+)\/stream\?output_format=mp3_44100_128$/.exec(path);
    if (m) return stream('audio/mpeg', `eleven-${m[1]}`);
    m = /^\/elevenlabs\/v1\/text-to-speech\/([^/]+)\/with-timestamps\?output_format=mp3_44100_128$/.exec(path);
    if (m) {
      const chars = [...text];
      return send(200, {
        audio_base64: audioBytes(`eleven-${m[1]}`).toString('base64'),
        alignment: { characters: chars, character_start_times_seconds: chars.map((_, i) => i * 0.1), character_end_times_seconds: chars.map((_, i) => (i + 1) * 0.1) },
        normalized_alignment: null,
      });
    }
    m = /^\/gemini\/v1beta\/models\/([^:]+):generateContent$/.exec(path);
    if (m) {
      return send(200, {
        candidates: [{ content: { role: 'model', parts: [{ inlineData: { mimeType: 'audio/L16;codec=pcm;rate=24000', data: pcmTone().toString('base64') } }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 25, totalTokenCount: 34, candidatesTokensDetails: [{ modality: 'AUDIO', tokenCount: 25 }] },
      });
    }
    send(404, { error: { message: `fake speech: no route for ${path}` } });
  })());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

export const speechConfig = (url: string) => `
providers:
  - { id: openai, type: openai, base_url: "${url}/openai/v1", api_key: openai-key }
  - { id: elevenlabs, type: elevenlabs, base_url: "${url}/elevenlabs/v1", api_key: eleven-key, voices: { narrator: AbCdEfGhIjKlMnOpQrSt } }
  - { id: gemini, type: gemini, base_url: "${url}/gemini/v1beta", api_key: gemini-key }
models:
  - { id: tts-1, endpoint: speech, upstreams: [{ provider: openai, model: tts-1 }] }
  - { id: tts-1-hd, endpoint: speech, billing: { tokens_per_1k_characters: 500 }, upstreams: [{ provider: openai, model: tts-1-hd }] }
  - { id: eleven_flash_v2, endpoint: speech, upstreams: [{ provider: elevenlabs, model: eleven_flash_v2 }] }
  - { id: eleven_v3, endpoint: speech, token_multiplier: 2, upstreams: [{ provider: elevenlabs, model: eleven_v3 }] }
  - { id: gemini-2.5-flash-preview-tts, endpoint: speech, upstreams: [{ provider: gemini, model: gemini-2.5-flash-preview-tts }] }
plans:
  - { id: free, rank: 0, daily_tokens: 1000000, requests_per_minute: 10000, max_concurrent_jobs: 4 }
jobs: { retention_hours: 1, sync_timeout_seconds: 1.5 }
`;
