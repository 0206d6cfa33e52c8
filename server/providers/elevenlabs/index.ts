// ElevenLabs: speech and transcription only.
import type { VendorManifest } from '../manifest.ts';
import { elevenlabsClient } from './client.ts';
import { elevenLabsSpeech } from './speech.ts';
import { elevenLabsTranscription } from './transcription.ts';

export const elevenlabs: VendorManifest = {
  type: 'elevenlabs',
  client: elevenlabsClient,
  adapters: { speech: elevenLabsSpeech, transcription: elevenLabsTranscription },
};
