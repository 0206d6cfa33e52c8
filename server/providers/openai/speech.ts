// OpenAI-format speech (`POST /audio/speech`), family A: the audio streamed as it comes.
import { download } from '../../upstream/http.ts';
import { extraFields, noPhonemes, type SpeechAdapter } from '../speech.ts';
import { vendorTarget } from '../vendor-client.ts';
import { openaiClient } from './client.ts';

export const OPENAI_VOICES = ['alloy', 'ash', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer'] as const;

/** The formats and the content type each is answered with. */
export const OPENAI_FORMATS: Record<string, string> = { mp3: 'audio/mpeg', opus: 'audio/opus', aac: 'audio/aac', flac: 'audio/flac' };

export const openAiSpeech: SpeechAdapter = {
  family: 'A',
  resolveVoice: (voice) => ((OPENAI_VOICES as readonly string[]).includes(voice.toLowerCase()) ? voice.toLowerCase() : null),
  voiceNames: () => [...OPENAI_VOICES],
  phonemes: noPhonemes,
  reads: ['speed', 'response_format'],
  async run({ body, text, voice }, call) {
    const format = body.response_format ?? 'mp3';
    // Fields of OpenAI's own (`instructions` for gpt-4o-mini-tts, ...) pass through; an SSE stream would not be audio.
    const { stream_format, ...extra } = extraFields(body);
    if (stream_format !== undefined) call.warn('stream_format: the gateway streams the audio itself; dropped');
    const json = { ...extra, model: call.upstreamModel, input: text, voice, response_format: format, ...(body.speed !== undefined ? { speed: body.speed } : {}) };
    const res = await call.waitOn(download({ ...vendorTarget(openaiClient, call.provider, '/audio/speech'), signal: call.signal }, { json }));
    return { kind: 'audio', contentType: OPENAI_FORMATS[format]!, body: res.body, length: res.contentLength };
  },
};
