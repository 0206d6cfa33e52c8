// OpenAI-format transcription (`POST /audio/transcriptions`, multipart). whisper-1 is asked for the
// richest timing it has (verbose_json with word and segment timestamps); the gpt-4o-transcribe
// family answers json only (text and token usage), so the gateway estimates its timing.
import type { MultipartField } from '../../upstream/multipart.ts';
import { postMultipart } from '../../upstream/http.ts';
import type { TranscriptionAdapter } from '../transcription.ts';
import { vendorTarget } from '../vendor-client.ts';
import { asWire } from '../../upstream/json.ts';
import type * as W from './wire.ts';
import { clampUsage, reported, withReported } from '../../translate/usage.ts';
import { openaiClient } from './client.ts';

const timed = (model: string) => /^whisper/.test(model);

export const openAiTranscription: TranscriptionAdapter = {
  async run({ file, language, prompt, temperature }, call) {
    const model = call.upstreamModel;
    const fields: MultipartField[] = [
      { name: 'file', filename: file.filename, contentType: file.mediaType, data: file.open, size: file.size },
      { name: 'model', value: model },
      { name: 'response_format', value: timed(model) ? 'verbose_json' : 'json' },
    ];
    if (timed(model)) fields.push({ name: 'timestamp_granularities[]', value: 'word' }, { name: 'timestamp_granularities[]', value: 'segment' });
    if (language) fields.push({ name: 'language', value: language });
    if (prompt) fields.push({ name: 'prompt', value: prompt });
    if (temperature !== null) fields.push({ name: 'temperature', value: String(temperature) });
    const answer = await call.waitOn(postMultipart({ ...vendorTarget(openaiClient, call.provider, '/audio/transcriptions'), signal: call.signal }, fields));
    const json = asWire<W.Transcription>(answer.json);
    const u = json.usage;
    // The audio's share of the input is priced as audio input (its own price), the rest as text.
    const usage =
      u?.type === 'tokens' && typeof u.input_tokens === 'number'
        ? clampUsage(
            withReported(
              { inputTokens: u.input_tokens, outputTokens: u.output_tokens ?? 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
              { audioInputTokens: reported(u.input_token_details?.audio_tokens) },
            ),
          )
        : null;
    return {
      transcript: {
        text: String(json.text ?? ''),
        language: typeof json.language === 'string' ? json.language : language,
        duration: typeof json.duration === 'number' ? json.duration : 0,
        words: Array.isArray(json.words) ? json.words.map((w) => ({ word: String(w.word), start: Number(w.start), end: Number(w.end) })) : null,
        segments: Array.isArray(json.segments) ? json.segments.map((s) => ({ start: Number(s.start), end: Number(s.end), text: String(s.text) })) : null,
      },
      usage,
      reportedSeconds: u?.type === 'duration' && typeof u.seconds === 'number' ? u.seconds : typeof json.duration === 'number' ? json.duration : null,
      ...(u ? { usageBody: u } : {}),
    };
  },
};
