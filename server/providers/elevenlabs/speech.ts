// ElevenLabs text to speech, family B: `/text-to-speech/{voice_id}/stream` (MP3, streamed as it
// comes), or `/with-timestamps` (JSON: the audio in base64 and per-character alignment).
import { download, postJson } from '../../upstream/http.ts';
import { extraFields, type SpeechAdapter } from '../speech.ts';
import { vendorTarget } from '../vendor-client.ts';
import { elevenlabsClient } from './client.ts';

const OUTPUT = 'mp3_44100_128';

export const elevenLabsSpeech: SpeechAdapter = {
  async run({ body, text, voice }, call) {
    // ElevenLabs' own fields (language_code, seed, previous_text, ...) pass through.
    const json = {
      ...extraFields(body),
      text,
      model_id: call.upstreamModel,
      voice_settings: { stability: body.stability ?? 0.5, similarity_boost: body.similarity_boost ?? 0.5 },
    };
    const voicePath = `/text-to-speech/${encodeURIComponent(voice)}`;
    if (body['with-timestamps'] === true) {
      const { json: answer } = await call.waitOn(postJson({ ...vendorTarget(elevenlabsClient, call.provider, `${voicePath}/with-timestamps?output_format=${OUTPUT}`), body: json, signal: call.signal }));
      return { kind: 'timestamps', json: { audio_base64: String(answer.audio_base64 ?? ''), alignment: answer.alignment ?? null, normalized_alignment: answer.normalized_alignment ?? null } };
    }
    const res = await call.waitOn(download({ ...vendorTarget(elevenlabsClient, call.provider, `${voicePath}/stream?output_format=${OUTPUT}`), signal: call.signal }, { json }));
    return { kind: 'audio', contentType: 'audio/mpeg', body: res.body, length: res.contentLength };
  },
};
