// Gemini TTS, family C: `generateContent` with the AUDIO modality answers headerless 16-bit PCM
// (`audio/L16;codec=pcm;rate=24000`); it is wrapped in a WAV header, its rate read from the type.
import { Readable } from 'node:stream';
import { wavHeader } from '../../speech/wav.ts';
import { postJson } from '../../upstream/http.ts';
import { extraFields, noPhonemes, type SpeechAdapter } from '../speech.ts';
import { droppedFields } from '../adapter.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import { vendorTarget } from '../vendor-client.ts';
import { asWire } from '../../upstream/json.ts';
import type * as W from './wire.ts';
import { geminiClient, modelPath } from './client.ts';

export const GEMINI_VOICES = ['Puck', 'Charon', 'Kore', 'Fenrir', 'Aoede'] as const;

export const geminiSpeech: SpeechAdapter = {
  family: 'C',
  resolveVoice: (voice) => GEMINI_VOICES.find((v) => v.toLowerCase() === voice.toLowerCase()) ?? null,
  voiceNames: () => [...GEMINI_VOICES],
  phonemes: noPhonemes,
  reads: [],
  async run({ body: request, text, voice }, call) {
    const extra = Object.keys(extraFields(request));
    if (extra.length) call.warn(droppedFields(extra));
    const body: W.GenerateContentRequest = {
      contents: [{ role: 'user', parts: [{ text }] }],
      generationConfig: { responseModalities: ['AUDIO'], speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: voice } } } },
    };
    const answer = await call.waitOn(postJson({ ...vendorTarget(geminiClient, call.provider, modelPath(call.upstreamModel, 'generateContent')), body, signal: call.signal }));
    const json = asWire<W.GenerateContentResponse>(answer.json);
    const audio = (json.candidates?.[0]?.content?.parts ?? []).find((p) => p.inlineData?.data)?.inlineData;
    if (!audio?.data) throw new UpstreamError(`provider '${call.provider.id}': answered without audio (finishReason ${json.candidates?.[0]?.finishReason ?? 'none'})`, 502, true, 'upstream_error');
    const mime = String(audio.mimeType ?? '');
    const pcm = Buffer.from(audio.data, 'base64');
    // Newer models may answer a WAV already.
    if (/^audio\/(wav|x-wav|wave)/.test(mime)) return { kind: 'audio', contentType: 'audio/wav', body: Readable.from([pcm]), length: pcm.length };
    const rate = Number(/rate=(\d+)/.exec(mime)?.[1] ?? 24_000);
    const channels = Number(/channels=(\d+)/.exec(mime)?.[1] ?? 1);
    const wav = Buffer.concat([wavHeader({ sampleRate: rate, channels, bitsPerSample: 16, dataBytes: pcm.length }), pcm]);
    return { kind: 'audio', contentType: 'audio/wav', body: Readable.from([wav]), length: wav.length };
  },
};
