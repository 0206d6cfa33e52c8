// Speech to text (docs/api.md, "Transcription"; issue 20) through the official openai client against fake OpenAI and
// ElevenLabs upstreams: every response format for every model, made by the gateway; the upload
// streamed, recognised by its bytes, refused past 25 MB; estimated timing; billing; jobs.
import OpenAI, { toFile } from 'openai';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createReadStream, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import SrtParser from 'srt-parser-2';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WebVTTParser } from 'webvtt-parser';
import { errorBody, pollJob, quotaOf, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { scribeAnswer, sttConfig, startFakeStt, whisperAnswer, type FakeStt } from './fake-stt.ts';

let fake: FakeStt;
let gw: TestGateway;
let key: string;
let client: OpenAI;

const run = promisify(execFile);
const fixture = (name: string) => new URL(`../fixtures/audio/${name}`, import.meta.url);
const WAV = readFileSync(fixture('speech.wav'));

beforeAll(async () => {
  fake = await startFakeStt();
  gw = await startTestGateway({ config: sttConfig(fake.url), env: { JOB_POLL_MS: '25' } });
  key = await gw.newKey();
  client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});
beforeEach(() => {
  fake.requests.length = 0;
});

const last = () => fake.requests[fake.requests.length - 1]!;
const form = (fields: Record<string, string | string[]>, file: Buffer | null = WAV, name = 'speech.wav') => {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) for (const x of [v].flat()) f.append(k, x);
  if (file) f.append('file', new Blob([file]), name);
  return f;
};
const post = (f: FormData, k = key, p = '/v1/audio/transcriptions') => gw.fetch(p, { method: 'POST', key: k, body: f });
const poll = (id: string, k = key) => pollJob(gw, `/v1/audio/transcriptions/jobs/${id}/status`, k);
const quota = (k: string) => quotaOf(gw, k);

describe('every format for every model, through the openai client', () => {
  it('whisper-1: the upstream asked for words and segments; json, text, verbose_json as asked', async () => {
    const json = await client.audio.transcriptions.create({ file: createReadStream(fixture('speech.wav')), model: 'whisper-1' });
    expect(json).toEqual({ text: whisperAnswer.text, usage: { type: 'duration', seconds: 5 } });
    expect(last().fields).toEqual({ model: ['whisper-1'], response_format: ['verbose_json'], 'timestamp_granularities[]': ['word', 'segment'] });
    expect(last().file).toEqual({ name: 'speech.wav', type: 'audio/wav', bytes: WAV });
    const text = await client.audio.transcriptions.create({ file: createReadStream(fixture('speech.wav')), model: 'whisper-1', response_format: 'text' });
    expect(text).toBe(`${whisperAnswer.text}\n`);
    const verbose = await client.audio.transcriptions.create({ file: createReadStream(fixture('speech.mp3')), model: 'whisper-1', response_format: 'verbose_json', timestamp_granularities: ['word', 'segment'] });
    expect(verbose.language).toBe('english');
    expect(verbose.duration).toBe(4.82);
    expect(verbose.words).toEqual(whisperAnswer.words);
    expect(verbose.segments!.map((s) => [s.start, s.end, s.text])).toEqual([[0.12, 1.4, 'Hello from the gateway.'], [1.62, 3.5, 'This is a test of speech to text.'], [3.9, 4.6, 'Goodbye.']]);
  });

  it('whisper-1 srt and vtt: cues built from the words, valid for subtitle parsers', async () => {
    const srt = await client.audio.transcriptions.create({ file: createReadStream(fixture('speech.m4a')), model: 'whisper-1', response_format: 'srt' });
    expect(srt).toBe('1\n00:00:00,120 --> 00:00:01,400\nHello from the gateway.\n\n2\n00:00:01,620 --> 00:00:03,500\nThis is a test of speech to text.\n\n3\n00:00:03,900 --> 00:00:04,600\nGoodbye.\n');
    expect(new SrtParser().fromSrt(srt as unknown as string).map((c) => c.text)).toEqual(['Hello from the gateway.', 'This is a test of speech to text.', 'Goodbye.']);
    const res = await post(form({ model: 'whisper-1', response_format: 'vtt' }));
    expect(res.headers.get('content-type')).toBe('text/vtt; charset=utf-8');
    const parsed = new WebVTTParser().parse(await res.text(), 'subtitles');
    expect(parsed.errors).toEqual([]);
    expect(parsed.cues.map((c) => [c.startTime, c.endTime])).toEqual([[0.12, 1.4], [1.62, 3.5], [3.9, 4.6]]);
    const srtRes = await post(form({ model: 'whisper-1', response_format: 'srt' }));
    expect(srtRes.headers.get('content-type')).toBe('application/x-subrip; charset=utf-8');
  });

  it('scribe_v2: word timing from Scribe, language named, every format', async () => {
    const verbose = await client.audio.transcriptions.create({ file: createReadStream(fixture('speech.webm')), model: 'scribe_v2', response_format: 'verbose_json', timestamp_granularities: ['word'] });
    expect(last().path).toBe('/elevenlabs/v1/speech-to-text');
    expect(last().fields).toEqual({ model_id: ['scribe_v2'], timestamps_granularity: ['word'], tag_audio_events: ['false'] });
    expect(last().headers['xi-api-key']).toBe('eleven-key');
    expect(verbose).toMatchObject({ task: 'transcribe', language: 'english', text: scribeAnswer.text });
    expect(verbose.words).toEqual([
      { word: 'Hello', start: 0.199, end: 0.479 },
      { word: 'from', start: 0.5, end: 0.639 },
      { word: 'the', start: 0.66, end: 0.759 },
      { word: 'gateway.', start: 0.759, end: 1.52 },
      { word: 'Goodbye.', start: 2.6, end: 3.2 },
    ]);
    // The duration comes from the container (the upstream gives none).
    expect(Math.abs(verbose.duration - 4.82)).toBeLessThan(0.1);
    const srt = await client.audio.transcriptions.create({ file: createReadStream(fixture('speech.webm')), model: 'scribe_v2', response_format: 'srt' });
    expect(srt).toBe('1\n00:00:00,199 --> 00:00:01,520\nHello from the gateway.\n\n2\n00:00:02,600 --> 00:00:03,200\nGoodbye.\n');
  });

  it('gpt-4o-transcribe: no timestamps upstream, so timing is estimated from the real duration, and says so', async () => {
    const res = await post(form({ model: 'gpt-4o-transcribe', response_format: 'verbose_json', 'timestamp_granularities[]': ['word', 'segment'] }));
    expect(res.status).toBe(200);
    expect(last().fields).toEqual({ model: ['gpt-4o-transcribe'], response_format: ['json'] });
    expect(res.headers.get('x-gateway-warnings')).toBe(
      "timing estimated: the upstream gives no timestamps, so sentences are laid over the audio's duration by their length; word timestamps: this model gives none, so verbose_json has no words",
    );
    const v: any = await res.json();
    expect(v.timing).toBe('estimated');
    expect(v.words).toBeUndefined();
    expect(v.duration).toBe(4.82);
    // 23 + 33 + 8 characters over 4.81775 s.
    expect(v.segments.map((s: any) => [s.start, s.end, s.text])).toEqual([
      [0, 1.731, 'Hello from the gateway.'],
      [1.731, 4.216, 'This is a test of speech to text.'],
      [4.216, 4.818, 'Goodbye.'],
    ]);
    const vtt = await client.audio.transcriptions.create({ file: createReadStream(fixture('speech.mp4')), model: 'gpt-4o-transcribe', response_format: 'vtt' });
    expect(new WebVTTParser().parse(vtt as unknown as string, 'subtitles').errors).toEqual([]);
  });
});

describe('the upload', () => {
  it('recognised by its bytes: a text file named .mp3 is 400 naming the accepted formats; missing file or model is 400 with param', async () => {
    let res = await post(form({ model: 'whisper-1' }, Buffer.from('I am a text file, not audio at all.'), 'notes.mp3'));
    expect(res.status).toBe(400);
    expect(await errorBody(res)).toEqual({
      message: 'The file is not audio in an accepted format (its content is not an audio container); send one of: mp3, mp4, mpeg, mpga, m4a, wav, webm.',
      type: 'invalid_request_error',
      code: 'unsupported_audio_format',
      param: 'file',
    });
    res = await post(form({ model: 'whisper-1' }, null));
    expect(await errorBody(res)).toMatchObject({ code: 'missing_required_parameter', param: 'file' });
    res = await post(form({}));
    expect(await errorBody(res)).toMatchObject({ param: 'model' });
    // A WAV named .txt is audio all the same.
    res = await post(form({ model: 'whisper-1' }, WAV, 'recording.txt'));
    expect(res.status).toBe(200);
    expect(fake.requests).toHaveLength(1);
  });

  it.each([
    [{ language: 'english' }, 'language'],
    [{ temperature: '1.5' }, 'temperature'],
    [{ response_format: 'docx' }, 'response_format'],
    [{ 'timestamp_granularities[]': 'word' }, 'timestamp_granularities'],
  ])('%j → 400 with param %s', async (fields, param) => {
    const res = await post(form({ model: 'whisper-1', ...fields }));
    expect(res.status).toBe(400);
    expect((await errorBody(res)).param).toBe(param);
  });

  it('over 25 MB is 413 as soon as the limit is crossed, the rest is not read, and memory does not grow by the upload', async () => {
    // The client is another process (its own socket buffers are not counted here), offering one
    // 1 MiB chunk again and again, up to 100 MiB.
    const client = `
      const chunk = Buffer.alloc(1024 * 1024, 7);
      const boundary = '----mgtest';
      const head = Buffer.concat([
        Buffer.from('--' + boundary + '\\r\\nContent-Disposition: form-data; name="model"\\r\\n\\r\\nwhisper-1\\r\\n--' + boundary + '\\r\\n'),
        Buffer.from('Content-Disposition: form-data; name="file"; filename="big.wav"\\r\\nContent-Type: audio/wav\\r\\n\\r\\n'),
        Buffer.from(process.argv[3], 'base64'),
      ]);
      let pulled = 0;
      const body = new ReadableStream({ pull(c) { if (pulled === 0) c.enqueue(head); if (pulled >= 100) return c.close(); pulled++; c.enqueue(chunk); } });
      fetch(process.argv[1], { method: 'POST', headers: { authorization: 'Bearer ' + process.argv[2], 'content-type': 'multipart/form-data; boundary=' + boundary }, body, duplex: 'half' })
        .then(async (r) => console.log(JSON.stringify({ status: r.status, body: await r.json(), pulled })), (e) => console.log(JSON.stringify({ error: String(e.cause?.code ?? e), pulled })));
    `;
    global.gc!();
    const before = process.memoryUsage();
    // Asynchronously: the gateway answering it runs in this process.
    const { stdout: out } = await run(process.execPath, ['-e', client, `${gw.url}/v1/audio/transcriptions`, key, WAV.subarray(0, 44).toString('base64')], { encoding: 'utf8' });
    const r = JSON.parse(out);
    // The gateway answers 413 and closes the connection: the client sees the answer or, if it was still writing, the reset.
    if (r.status !== undefined) {
      expect(r.status).toBe(413);
      expect(r.body.error).toMatchObject({ code: 'payload_too_large', message: 'The audio file is larger than 25 MB.' });
    }
    expect(r.pulled, `MiB the client was asked for: ${r.pulled}`).toBeLessThan(40); // 25 MiB read, a few more in socket buffers, the rest never sent
    // Closing the connection and removing the temporary file finish shortly after the answer (on
    // a loaded machine, a while after): what counts is what stays held, so measure until settled.
    let grew = Infinity;
    for (let i = 0; i < 30 && grew >= 8 * 1024 * 1024; i++) {
      await sleep(100);
      global.gc!();
      grew = process.memoryUsage().arrayBuffers - before.arrayBuffers;
    }
    // The 25 MiB read went to a temporary file (removed), not to memory (the bound leaves room for
    // what other work in this process holds at that moment, far below the upload).
    expect(grew, `array buffers grew by ${grew} bytes`).toBeLessThan(8 * 1024 * 1024);
    expect(fake.requests).toEqual([]);
  });

  it('a 24 MB upload to a job streams into the blob store, its size exact', async () => {
    const chunk = Buffer.alloc(1024 * 1024, 0);
    WAV.copy(chunk, 0, 0, 44);
    const f = new FormData();
    f.set('model', 'whisper-1');
    // A Blob of 24 references to one chunk: the client side holds 1 MiB.
    f.set('file', new Blob(Array(24).fill(chunk)), 'long.wav');
    const res = await post(f, key, '/v1/audio/transcriptions/jobs');
    expect(res.status).toBe(202);
    const job: any = await res.json();
    const row = await gw.services.db.prisma.job.findUniqueOrThrow({ where: { id: job.id } });
    expect((row.request as any).upload.size).toBe(24 * 1024 * 1024);
    expect((await poll(job.id)).status).toBe('done');
  });
});

describe('billing', () => {
  it('per audio minute from the container × multiplier; reported tokens win; an upstream failure bills nothing', async () => {
    const k = await gw.newKey();
    await (await post(form({ model: 'scribe_v2' }), k)).arrayBuffer();
    // 4.81775 s of audio = 0.0803 minutes × 1000 tokens = 81 (rounded up), × multiplier 2.
    expect(await quota(k)).toEqual({ settled: 162, reserved: 0 });
    await (await post(form({ model: 'gpt-4o-mini-transcribe' }), k)).arrayBuffer();
    // The upstream reported 120 + 16 tokens: billed instead of the minutes.
    expect(await quota(k)).toEqual({ settled: 162 + 136, reserved: 0 });
    // whisper-1 says 5 s: 0.0833 minutes × 1000.
    await (await post(form({ model: 'whisper-1' }), k)).arrayBuffer();
    expect(await quota(k)).toEqual({ settled: 162 + 136 + 84, reserved: 0 });
    const res = await post(form({ model: 'whisper-1', prompt: 'fail-400' }), k);
    expect(res.status).toBe(400);
    expect(await quota(k)).toEqual({ settled: 162 + 136 + 84, reserved: 0 });
  });
});

describe('async transcription jobs', () => {

  it('submit (the upload stored in the blob store) → status → download the SRT; 403 for another key', async () => {
    const res = await post(form({ model: 'whisper-1', response_format: 'srt' }, readFileSync(fixture('speech.mpga')), 'speech.mpga'), key, '/v1/audio/transcriptions/jobs');
    expect(res.status).toBe(202);
    const job: any = await res.json();
    expect(job).toMatchObject({ object: 'audio.transcription.job', model: 'whisper-1', download_url: `/v1/audio/transcriptions/jobs/${job.id}/download` });
    const done = await poll(job.id);
    expect(done).toMatchObject({ status: 'done', result: { content_type: 'application/x-subrip; charset=utf-8' } });
    const dl = await gw.fetch(`/v1/audio/transcriptions/jobs/${job.id}/download`, { key });
    expect(dl.headers.get('content-type')).toBe('application/x-subrip; charset=utf-8');
    expect(new SrtParser().fromSrt(await dl.text())).toHaveLength(3);
    expect(last().file!.bytes).toEqual(readFileSync(fixture('speech.mpga')));
    expect((await gw.fetch(`/v1/audio/transcriptions/jobs/${job.id}/status`, { key: await gw.newKey() })).status).toBe(403);
  });

  it('a bad upload is refused before a job exists', async () => {
    const res = await post(form({ model: 'whisper-1' }, Buffer.from('plain text')), key, '/v1/audio/transcriptions/jobs');
    expect(res.status).toBe(400);
    expect((await errorBody(res)).code).toBe('unsupported_audio_format');
  });
});

// The SDK's helper for in-memory files works too.
it('toFile uploads', async () => {
  const r = await client.audio.transcriptions.create({ file: await toFile(WAV, 'x.wav'), model: 'whisper-1', response_format: 'text' });
  expect(r).toBe(`${whisperAnswer.text}\n`);
});
