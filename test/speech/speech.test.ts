// Text to speech (docs/api.md, "Speech"; issue 19) through the official openai client and plain HTTP, against
// fake OpenAI, ElevenLabs and Gemini upstreams: the three families, voices, family fields,
// pronunciation rules end to end, streaming, WAV, timestamps, the 4096 cap, jobs, 524, billing.
import OpenAI from 'openai';
import { execFileSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { errorBody, pollJob, quotaOf, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { audioBytes, pcmTone, speechConfig, startFakeSpeech, type FakeSpeech } from './fake-speech.ts';

let fake: FakeSpeech;
let gw: TestGateway;
let key: string;
let client: OpenAI;
let dir: string;

beforeAll(async () => {
  fake = await startFakeSpeech();
  gw = await startTestGateway({ config: speechConfig(fake.url), env: { JOB_POLL_MS: '25' } });
  key = await gw.newKey();
  client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  dir = mkdtempSync(path.join(tmpdir(), 'mg-speech-'));
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  fake.requests.length = 0;
  fake.chunkDelayMs = 0;
});

const post = (json: unknown, k = key, p = '/v1/audio/speech') => gw.fetch(p, { method: 'POST', key: k, json });
const last = () => fake.requests[fake.requests.length - 1]!;
const quota = (k: string) => quotaOf(gw, k);
/** The client's way: the SDK's response body streamed to a file. */
async function toFile(res: Response, name: string): Promise<Buffer> {
  const file = path.join(dir, name);
  await pipeline(Readable.fromWeb(res.body as never), createWriteStream(file));
  return readFileSync(file);
}

/** Reads a WAV header back: what a player would. */
function parseWav(b: Buffer) {
  expect(b.toString('ascii', 0, 4)).toBe('RIFF');
  expect(b.readUInt32LE(4)).toBe(b.length - 8);
  expect(b.toString('ascii', 8, 16)).toBe('WAVEfmt ');
  const f = { format: b.readUInt16LE(20), channels: b.readUInt16LE(22), rate: b.readUInt32LE(24), byteRate: b.readUInt32LE(28), blockAlign: b.readUInt16LE(32), bits: b.readUInt16LE(34) };
  expect(b.toString('ascii', 36, 40)).toBe('data');
  const dataBytes = b.readUInt32LE(40);
  expect(dataBytes).toBe(b.length - 44);
  return { ...f, dataBytes, seconds: dataBytes / f.byteRate };
}

describe('the three families through the openai client', () => {
  it('A (OpenAI): the format asked for, its content type, streamed to a file; speed forwarded', async () => {
    const res = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'Hello there.', response_format: 'flac', speed: 1.5 });
    expect(res.headers.get('content-type')).toBe('audio/flac');
    expect(res.headers.get('x-gateway-upstream')).toBe('openai');
    expect(await toFile(res, 'a.flac')).toEqual(audioBytes('openai-alloy'));
    expect(last().json).toEqual({ model: 'tts-1', input: 'Hello there.', voice: 'alloy', response_format: 'flac', speed: 1.5 });
    expect(last().headers.authorization).toBe('Bearer openai-key');
    const mp3 = await client.audio.speech.create({ model: 'tts-1', voice: 'Nova' as never, input: 'Hi.' });
    expect(mp3.headers.get('content-type')).toBe('audio/mpeg');
    expect(Buffer.from(await mp3.arrayBuffer())).toEqual(audioBytes('openai-nova'));
  });

  it('B (ElevenLabs): the voice name mapped to its id, voice_settings with defaults, audio/mpeg', async () => {
    const res = await client.audio.speech.create({ model: 'eleven_flash_v2', voice: 'aria' as never, input: 'Hello.', stability: 0.3 } as never);
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    expect(await toFile(res, 'b.mp3')).toEqual(audioBytes('eleven-9BWtsMINqrJLrRacOk9x'));
    expect(last().path).toBe('/elevenlabs/v1/text-to-speech/9BWtsMINqrJLrRacOk9x/stream?output_format=mp3_44100_128');
    expect(last().headers['xi-api-key']).toBe('eleven-key');
    expect(last().json).toEqual({ text: 'Hello.', model_id: 'eleven_flash_v2', voice_settings: { stability: 0.3, similarity_boost: 0.5 } });
    // A name the operator added in config, and a raw voice id.
    await (await post({ model: 'eleven_flash_v2', voice: 'Narrator', input: 'x' })).arrayBuffer();
    expect(last().path).toContain('/text-to-speech/AbCdEfGhIjKlMnOpQrSt/stream');
    await (await post({ model: 'eleven_flash_v2', voice: 'ZyXwVuTsRqPoNmLkJiHg', input: 'x' })).arrayBuffer();
    expect(last().path).toContain('/text-to-speech/ZyXwVuTsRqPoNmLkJiHg/stream');
  });

  it('C (Gemini): the upstream PCM wrapped in a valid WAV at the rate its type names, one second long', async () => {
    const res = await client.audio.speech.create({ model: 'gemini-2.5-flash-preview-tts', voice: 'kore' as never, input: 'Say hello.' });
    expect(res.headers.get('content-type')).toBe('audio/wav');
    const wav = await toFile(res, 'c.wav');
    expect(parseWav(wav)).toEqual({ format: 1, channels: 1, rate: 24_000, byteRate: 48_000, blockAlign: 2, bits: 16, dataBytes: 48_000, seconds: 1 });
    expect(wav.subarray(44)).toEqual(pcmTone());
    // And as a person would check it: sox reads the file as 1 s of 24 kHz mono 16-bit audio.
    const sox = (flag: string) => execFileSync('sox', ['--i', flag, path.join(dir, 'c.wav')], { encoding: 'utf8' }).trim();
    expect([sox('-r'), sox('-c'), sox('-b'), sox('-D'), sox('-e')]).toEqual(['24000', '1', '16', '1.000000', 'Signed Integer PCM']);
    expect(last().json).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Say hello.' }] }],
      generationConfig: { responseModalities: ['AUDIO'], speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Kore' } } } },
    });
  });

  it('audio reaches the client as the upstream sends it, not after the last byte', async () => {
    fake.chunkDelayMs = 400;
    const started = Date.now();
    const res = await post({ model: 'tts-1', voice: 'echo', input: 'Streaming.' });
    const reader = res.body!.getReader();
    const first = await reader.read();
    const firstAt = Date.now() - started;
    expect(Buffer.from(first.value!).toString('latin1')).toBe('\xff\xfb\x90\x00openai-echo-1|');
    expect(firstAt).toBeLessThan(600); // the whole answer takes 1200 ms
    let rest = 0;
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += r.value.length;
    expect(rest).toBe('openai-echo-2|openai-echo-3'.length);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1100);
  });
});

describe('request rules', () => {
  it('a voice of another family: 400 naming the valid voices', async () => {
    let res = await post({ model: 'tts-1', voice: 'aria', input: 'x' });
    expect(res.status).toBe(400);
    expect(await errorBody(res)).toEqual({
      message: "The voice 'aria' is not a voice of the model 'tts-1' (family A); use one of: alloy, ash, coral, echo, fable, nova, onyx, sage, shimmer.",
      type: 'invalid_request_error',
      code: 'invalid_voice',
      param: 'voice',
    });
    res = await post({ model: 'gemini-2.5-flash-preview-tts', voice: 'alloy', input: 'x' });
    expect((await errorBody(res)).message).toBe("The voice 'alloy' is not a voice of the model 'gemini-2.5-flash-preview-tts' (family C); use one of: Puck, Charon, Kore, Fenrir, Aoede.");
    res = await post({ model: 'eleven_v3', voice: 'Kore', input: 'x' });
    expect((await errorBody(res)).message).toMatch(/^The voice 'Kore' is not a voice of the model 'eleven_v3' \(family B\); use one of: alice, aria, bill, brian, .*, will, narrator\.$/);
    expect(fake.requests).toEqual([]);
  });

  it.each([
    [{ speed: 0.2 }, 'speed'],
    [{ speed: 4.5 }, 'speed'],
    [{ stability: 1.2 }, 'stability'],
    [{ similarity_boost: -0.1 }, 'similarity_boost'],
    [{ response_format: 'wav' }, 'response_format'],
    [{ input: '' }, 'input'],
    [{ pronunciation_dictionary: Array(101).fill({ string_to_replace: 'a', type: 'alias', alias: 'b' }) }, 'pronunciation_dictionary'],
    [{ pronunciation_dictionary: [{ string_to_replace: 'x'.repeat(201), type: 'alias', alias: 'b' }] }, 'pronunciation_dictionary[0].string_to_replace'],
    [{ pronunciation_dictionary: [{ string_to_replace: 'x', type: 'phoneme', phoneme: 'b' }] }, 'pronunciation_dictionary[0].alphabet'],
  ])('%j → 400 with param %s', async (extra, param) => {
    const res = await post({ model: 'tts-1', voice: 'alloy', input: 'hello', ...extra });
    expect(res.status).toBe(400);
    expect((await errorBody(res)).param).toBe(param);
  });

  it("fields of another family are ignored and named in X-Gateway-Warnings", async () => {
    let res = await post({ model: 'tts-1', voice: 'alloy', input: 'x', stability: 0.2, 'with-timestamps': true });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    expect(res.headers.get('x-gateway-warnings')).toBe('ignored by this model (family A): stability, with-timestamps');
    await res.arrayBuffer();
    res = await post({ model: 'eleven_flash_v2', voice: 'will', input: 'x', speed: 2, response_format: 'flac' });
    expect(res.headers.get('x-gateway-warnings')).toBe('ignored by this model (family B): speed, response_format');
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    await res.arrayBuffer();
  });

  it("other fields pass through to OpenAI and ElevenLabs (their own options), and are named when Gemini has no place for them", async () => {
    let res = await post({ model: 'tts-1', voice: 'alloy', input: 'x', instructions: 'Speak cheerfully.', stream_format: 'sse' });
    await res.arrayBuffer();
    expect(last().json).toEqual({ instructions: 'Speak cheerfully.', model: 'tts-1', input: 'x', voice: 'alloy', response_format: 'mp3' });
    expect(res.headers.get('x-gateway-warnings')).toBe('stream_format: the gateway streams the audio itself; dropped');
    res = await post({ model: 'eleven_flash_v2', voice: 'aria', input: 'x', language_code: 'en', seed: 7 });
    await res.arrayBuffer();
    expect(last().json).toEqual({ language_code: 'en', seed: 7, text: 'x', model_id: 'eleven_flash_v2', voice_settings: { stability: 0.5, similarity_boost: 0.5 } });
    res = await post({ model: 'gemini-2.5-flash-preview-tts', voice: 'Puck', input: 'x', seed: 7 });
    await res.arrayBuffer();
    expect(res.headers.get('x-gateway-warnings')).toBe("not supported by this model's provider, dropped: seed");
  });

  it('family B: 4096 characters at most as sent, phoneme tags included', async () => {
    const rule = { string_to_replace: 'tomato', type: 'phoneme', phoneme: 'təˈmeɪtoʊ', alphabet: 'ipa' };
    const tag = '<phoneme alphabet="ipa" ph="təˈmeɪtoʊ">tomato</phoneme>';
    // 80 tomatoes: 559 characters as written, 80 × 52 + 79 = 4239 as sent.
    const input = Array(80).fill('tomato').join(' ');
    expect(input.length).toBeLessThan(4096);
    const res = await post({ model: 'eleven_flash_v2', voice: 'aria', input, pronunciation_dictionary: [rule] });
    expect(res.status).toBe(400);
    expect(await errorBody(res)).toEqual({
      message: `The input is ${80 * tag.length + 79} characters as sent (phoneme tags included); the model 'eleven_flash_v2' takes at most 4096: split it into several requests.`,
      type: 'invalid_request_error',
      code: 'input_too_long',
      param: 'input',
    });
    // Without the tags (tts-1 skips phoneme rules) the same text is fine; and 4096 plain characters pass on B.
    expect((await post({ model: 'tts-1', voice: 'alloy', input, pronunciation_dictionary: [rule] })).status).toBe(200);
    expect((await post({ model: 'eleven_flash_v2', voice: 'aria', input: 'a'.repeat(4096) })).status).toBe(200);
    expect((await post({ model: 'eleven_flash_v2', voice: 'aria', input: 'a'.repeat(4097) })).status).toBe(400);
  });
});

describe('pronunciation dictionaries end to end', () => {
  const dictionary = [
    { string_to_replace: 'tomato', type: 'phoneme', ph: 'təˈmeɪtoʊ', alphabet: 'ipa' },
    { string_to_replace: 'Madison', type: 'phoneme', phoneme: 'M AE1 D IH0 S AH0 N', alphabet: 'cmu-arpabet' },
    { string_to_replace: 'SQL', type: 'alias', alias: 'sequel' },
  ];
  const input = 'Madison likes tomato and SQL.';

  it('flash v2: both alphabets as inline tags, aliases applied, no warnings', async () => {
    const res = await post({ model: 'eleven_flash_v2', voice: 'aria', input, pronunciation_dictionary: dictionary });
    expect(res.headers.get('x-service-pronunciation-warnings')).toBeNull();
    await res.arrayBuffer();
    expect(last().json!.text).toBe('<phoneme alphabet="cmu-arpabet" ph="M AE1 D IH0 S AH0 N">Madison</phoneme> likes <phoneme alphabet="ipa" ph="təˈmeɪtoʊ">tomato</phoneme> and sequel.');
  });

  it('v3: ipa only; the cmu-arpabet rule skipped and named in the header', async () => {
    const res = await post({ model: 'eleven_v3', voice: 'aria', input, pronunciation_dictionary: dictionary });
    expect(res.headers.get('x-service-pronunciation-warnings')).toBe('phoneme rule "Madison" skipped: model eleven_v3 supports only ipa phonemes, not cmu-arpabet; the word is read as written');
    await res.arrayBuffer();
    expect(last().json!.text).toBe('Madison likes <phoneme alphabet="ipa" ph="təˈmeɪtoʊ">tomato</phoneme> and sequel.');
  });

  it('OpenAI and Gemini: phoneme rules skipped with warnings, aliases applied', async () => {
    for (const [model, voice] of [['tts-1', 'alloy'], ['gemini-2.5-flash-preview-tts', 'Puck']]) {
      const res = await post({ model, voice, input, pronunciation_dictionary: dictionary });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-service-pronunciation-warnings')).toBe(
        `phoneme rule "tomato" skipped: model ${model} does not support phoneme tags; the word is read as written; phoneme rule "Madison" skipped: model ${model} does not support phoneme tags; the word is read as written`,
      );
      await res.arrayBuffer();
      const sent = last().json!;
      expect(sent.input ?? sent.contents[0].parts[0].text).toBe('Madison likes tomato and sequel.');
    }
  });

  it('with-timestamps: the audio in base64, the alignment, and the pronunciation warnings in the body', async () => {
    const res = await post({ model: 'eleven_v3', voice: 'aria', input, pronunciation_dictionary: dictionary, 'with-timestamps': true });
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body: any = await res.json();
    expect(last().path).toBe('/elevenlabs/v1/text-to-speech/9BWtsMINqrJLrRacOk9x/with-timestamps?output_format=mp3_44100_128');
    expect(Buffer.from(body.audio_base64, 'base64')).toEqual(audioBytes('eleven-9BWtsMINqrJLrRacOk9x'));
    const sent = 'Madison likes <phoneme alphabet="ipa" ph="təˈmeɪtoʊ">tomato</phoneme> and sequel.';
    expect(body.alignment.characters).toEqual([...sent]);
    expect(body.alignment.character_start_times_seconds).toHaveLength([...sent].length);
    expect(body.normalized_alignment).toBeNull();
    expect(body.pronunciation_warnings).toEqual(['phoneme rule "Madison" skipped: model eleven_v3 supports only ipa phonemes, not cmu-arpabet; the word is read as written']);
  });

  it('billed per 1,000 characters as spoken (aliases applied, tags not counted) × multiplier', async () => {
    const k = await gw.newKey();
    await (await post({ model: 'eleven_v3', voice: 'aria', input, pronunciation_dictionary: dictionary }, k)).arrayBuffer();
    // "Madison likes tomato and sequel." = 32 characters × 250 / 1000 = 8 tokens, × 2.
    expect(await quota(k)).toEqual({ settled: 16, reserved: 0 });
    await (await post({ model: 'tts-1-hd', voice: 'alloy', input: 'x'.repeat(1000) }, k)).arrayBuffer();
    expect(await quota(k)).toEqual({ settled: 516, reserved: 0 });
  });

  it('nothing is billed when the upstream refuses', async () => {
    const k = await gw.newKey();
    const res = await post({ model: 'tts-1', voice: 'alloy', input: 'please refuse this' }, k);
    expect(res.status).toBe(400);
    expect((await errorBody(res)).code).toBe('upstream_invalid_request');
    expect(await quota(k)).toEqual({ settled: 0, reserved: 0 });
  });
});

describe('async speech jobs', () => {
  const poll = (id: string, k = key) => pollJob(gw, `/v1/audio/speech/jobs/${id}/status`, k);

  it('submit → status (409 before done, pronunciation warnings, content type and size) → download; another key 403', async () => {
    fake.chunkDelayMs = 300;
    const res = await post({ model: 'eleven_v3', voice: 'aria', input: 'Madison and tomato.', pronunciation_dictionary: [{ string_to_replace: 'Madison', type: 'phoneme', phoneme: 'M AE1', alphabet: 'cmu-arpabet' }] }, key, '/v1/audio/speech/jobs');
    expect(res.status).toBe(202);
    const job: any = await res.json();
    expect(job).toMatchObject({ object: 'audio.speech.job', status: 'queued', model: 'eleven_v3', download_url: `/v1/audio/speech/jobs/${job.id}/download`, result: null });
    const early = await gw.fetch(`/v1/audio/speech/jobs/${job.id}/download`, { key });
    expect(early.status).toBe(409);
    expect((await errorBody(early)).code).toBe('job_not_ready');
    const done = await poll(job.id);
    const bytes = audioBytes('eleven-9BWtsMINqrJLrRacOk9x');
    expect(done).toMatchObject({
      status: 'done',
      pronunciation_warnings: ['phoneme rule "Madison" skipped: model eleven_v3 supports only ipa phonemes, not cmu-arpabet; the word is read as written'],
      warnings: [],
      result: { content_type: 'audio/mpeg', bytes: bytes.length },
    });
    const dl = await gw.fetch(`/v1/audio/speech/jobs/${job.id}/download`, { key });
    expect(dl.headers.get('content-type')).toBe('audio/mpeg');
    expect(Buffer.from(await dl.arrayBuffer())).toEqual(bytes);
    const other = await gw.newKey();
    expect((await gw.fetch(`/v1/audio/speech/jobs/${job.id}/status`, { key: other })).status).toBe(403);
    expect((await gw.fetch(`/v1/audio/speech/jobs/${job.id}/download`, { key: other })).status).toBe(403);
    // An image job's id is not a speech job.
    expect((await gw.fetch('/v1/audio/speech/jobs/job_unknown/status', { key })).status).toBe(404);
  });

  it('a job is checked like a request: a wrong voice is 400 before anything is queued', async () => {
    const res = await post({ model: 'tts-1', voice: 'kore', input: 'x' }, key, '/v1/audio/speech/jobs');
    expect(res.status).toBe(400);
    expect((await errorBody(res)).code).toBe('invalid_voice');
  });

  it('with-timestamps jobs download the JSON; a refused job fails and bills nothing', async () => {
    const k = await gw.newKey();
    const job: any = await (await post({ model: 'eleven_flash_v2', voice: 'aria', input: 'Hi.', 'with-timestamps': true }, k, '/v1/audio/speech/jobs')).json();
    const done = await poll(job.id, k);
    expect(done.result.content_type).toBe('application/json');
    const body: any = await (await gw.fetch(`/v1/audio/speech/jobs/${job.id}/download`, { key: k })).json();
    expect(body.alignment.characters).toEqual(['H', 'i', '.']);
    expect(body.pronunciation_warnings).toEqual([]);
    const settled = (await quota(k)).settled;
    const refused: any = await (await post({ model: 'tts-1', voice: 'alloy', input: 'refuse' }, k, '/v1/audio/speech/jobs')).json();
    expect(await poll(refused.id, k)).toMatchObject({ status: 'failed', error: { code: 'upstream_invalid_request' } });
    expect(await quota(k)).toEqual({ settled, reserved: 0 });
  });

  it('a synchronous request past jobs.sync_timeout_seconds answers 524 naming the job that finishes it, billed once', async () => {
    const k = await gw.newKey();
    const res = await post({ model: 'gemini-2.5-flash-preview-tts', voice: 'Puck', input: 'slow:2500 a long read' }, k);
    expect(res.status).toBe(524);
    const body: any = await res.json();
    expect(body.error).toMatchObject({ code: 'generation_timeout', type: 'server_error', job_id: body.job.id });
    expect(body.error.message).toBe(`The speech was not ready within 1.5 s. It is still being made as job ${body.job.id}: poll GET /v1/audio/speech/jobs/${body.job.id}/status for the result (billed once).`);
    expect(body.job).toMatchObject({ object: 'audio.speech.job', status: 'in_progress' });
    const done = await poll(body.job.id, k);
    expect(done.result).toEqual({ content_type: 'audio/wav', bytes: 48_044 });
    const wav = Buffer.from(await (await gw.fetch(`/v1/audio/speech/jobs/${body.job.id}/download`, { key: k })).arrayBuffer());
    expect(parseWav(wav).seconds).toBe(1);
    // "slow:2500 a long read" = 21 characters → ceil(21 × 0.25) = 6 tokens, once.
    expect(await quota(k)).toEqual({ settled: 6, reserved: 0 });
  });
});
