// OpenAI-format speech (`POST /audio/speech`), family A: the audio streamed as it comes.
import { OPENAI_FORMATS } from '../../speech/voices.ts';
import { download } from '../http.ts';
import type { SpeechAdapter } from '../speech.ts';
import { vendorTarget } from '../vendor-client.ts';
import { openaiClient } from './client.ts';

export const openAiSpeech: SpeechAdapter = {
  async run({ body, text, voice }, call) {
    const format = body.response_format ?? 'mp3';
    const json = { model: call.upstreamModel, input: text, voice, response_format: format, ...(body.speed !== undefined ? { speed: body.speed } : {}) };
    const res = await call.waitOn(download({ ...vendorTarget(openaiClient, call.provider, '/audio/speech'), signal: call.signal }, { json }));
    return { kind: 'audio', contentType: OPENAI_FORMATS[format]!, body: res.body, length: res.contentLength };
  },
};
