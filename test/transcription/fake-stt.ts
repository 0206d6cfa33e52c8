// Fake OpenAI and ElevenLabs transcription upstreams from the recorded answers
// (test/fixtures/recorded/upstreams/vercel+ai: openai-transcription.json, elevenlabs-transcription.json), receiving
// the upload as multipart and recording what they got. `fail-<status>` in the prompt fails.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

type Json = Record<string, any>;
export type SttRecorded = { path: string; headers: IncomingMessage['headers']; fields: Record<string, string[]>; file: { name: string; type: string; bytes: Buffer } | null };

export type FakeStt = { url: string; requests: SttRecorded[]; close(): Promise<void> };

/** whisper-1's verbose_json: words and segments, the duration, usage in seconds. */
export const whisperAnswer = {
  task: 'transcribe',
  language: 'english',
  duration: 4.82,
  text: 'Hello from the gateway. This is a test of speech to text. Goodbye.',
  words: [
    ['Hello', 0.12, 0.44], ['from', 0.44, 0.62], ['the', 0.62, 0.74], ['gateway.', 0.74, 1.4],
    ['This', 1.62, 1.8], ['is', 1.8, 1.92], ['a', 1.92, 2.0], ['test', 2.0, 2.3], ['of', 2.3, 2.42], ['speech', 2.42, 2.8], ['to', 2.8, 2.92], ['text.', 2.92, 3.5],
    ['Goodbye.', 3.9, 4.6],
  ].map(([word, start, end]) => ({ word, start, end })),
  segments: [
    { id: 0, seek: 0, start: 0.12, end: 1.4, text: ' Hello from the gateway.', tokens: [1], temperature: 0, avg_logprob: -0.2, compression_ratio: 1, no_speech_prob: 0.01 },
    { id: 1, seek: 0, start: 1.62, end: 3.5, text: ' This is a test of speech to text.', tokens: [2], temperature: 0, avg_logprob: -0.2, compression_ratio: 1, no_speech_prob: 0.01 },
    { id: 2, seek: 0, start: 3.9, end: 4.6, text: ' Goodbye.', tokens: [3], temperature: 0, avg_logprob: -0.2, compression_ratio: 1, no_speech_prob: 0.01 },
  ],
  usage: { type: 'duration', seconds: 5 },
};

/** Scribe: words with spacing entries between them, an ISO 639-3 language, no duration. */
export const scribeAnswer = {
  language_code: 'eng',
  language_probability: 0.98,
  text: 'Hello from the gateway. Goodbye.',
  words: [
    ['Hello', 0.199, 0.479, 'word'], [' ', 0.479, 0.499, 'spacing'], ['from', 0.5, 0.639, 'word'], [' ', 0.639, 0.66, 'spacing'], ['the', 0.66, 0.759, 'word'],
    [' ', 0.759, 0.759, 'spacing'], ['gateway.', 0.759, 1.52, 'word'], [' ', 1.52, 2.6, 'spacing'], ['Goodbye.', 2.6, 3.2, 'word'],
  ].map(([text, start, end, type]) => ({ text, start, end, type, speaker_id: 'speaker_0', logprob: 0 })),
};

export async function startFakeStt(): Promise<FakeStt> {
  const requests: SttRecorded[] = [];
  let server: Server;
  const fake: FakeStt = { url: '', requests, close: () => new Promise((r) => server.close(() => r())) };
  server = createServer((req, res) => void (async () => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const rec: SttRecorded = { path: req.url ?? '/', headers: req.headers, fields: {}, file: null };
    const form = await new Response(raw, { headers: { 'content-type': String(req.headers['content-type']) } }).formData();
    for (const [name, v] of form.entries()) {
      if (typeof v === 'string') (rec.fields[name] ??= []).push(v);
      else rec.file = { name: v.name, type: v.type, bytes: Buffer.from(await v.arrayBuffer()) };
    }
    requests.push(rec);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const fail = /fail-(\d{3})/.exec(rec.fields.prompt?.[0] ?? '');
    if (fail) return send(Number(fail[1]), { error: { message: `fake ${fail[1]}`, type: 'server_error' } });
    if (rec.path === '/openai/v1/audio/transcriptions') {
      const model = rec.fields.model?.[0];
      if (model === 'whisper-1') return send(200, whisperAnswer);
      // The gpt-4o-transcribe family: text and token usage, no timing.
      return send(200, { text: whisperAnswer.text, usage: { type: 'tokens', input_tokens: 120, input_token_details: { text_tokens: 0, audio_tokens: 120 }, output_tokens: 16, total_tokens: 136 } });
    }
    if (rec.path === '/elevenlabs/v1/speech-to-text') return send(200, scribeAnswer);
    send(404, { error: { message: `fake stt: no route for ${rec.path}` } });
  })());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

export const sttConfig = (url: string) => `
providers:
  - { id: openai, type: openai, base_url: "${url}/openai/v1", api_key: openai-key }
  - { id: elevenlabs, type: elevenlabs, base_url: "${url}/elevenlabs/v1", api_key: eleven-key }
models:
  - { id: whisper-1, endpoint: transcription, upstreams: [{ provider: openai, model: whisper-1 }] }
  - { id: gpt-4o-transcribe, endpoint: transcription, upstreams: [{ provider: openai, model: gpt-4o-transcribe }] }
  - { id: gpt-4o-mini-transcribe, endpoint: transcription, billing: { tokens_per_audio_minute: 500 }, upstreams: [{ provider: openai, model: gpt-4o-mini-transcribe }] }
  - { id: scribe_v2, endpoint: transcription, token_multiplier: 2, upstreams: [{ provider: elevenlabs, model: scribe_v2 }] }
plans:
  - { id: free, rank: 0, daily_tokens: 1000000, requests_per_minute: 10000, max_concurrent_jobs: 4 }
jobs: { retention_hours: 1 }
`;
