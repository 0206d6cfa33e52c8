// ElevenLabs: speech and transcription only.
import type { VendorManifest } from '../manifest.ts';
import { elevenlabsClient } from './client.ts';
import { elevenLabsSpeech } from './speech.ts';
import { elevenLabsTranscription } from './transcription.ts';

export const elevenlabs: VendorManifest = {
  type: 'elevenlabs',
  // Not a well-known value of the conventions: the vendor's name, as they advise for others.
  genAiProviderName: 'elevenlabs',
  client: elevenlabsClient,
  adapters: { speech: elevenLabsSpeech, transcription: elevenLabsTranscription },
  builtins: [
    {
      id: 'elevenlabs',
      env: 'ELEVENLABS_API_KEY',
      base_url: 'https://api.elevenlabs.io/v1',
      models: [
        { id: 'eleven_v3', endpoint: 'speech' },
        { id: 'eleven_flash_v2', endpoint: 'speech' },
        { id: 'eleven_turbo_v2', endpoint: 'speech' },
        { id: 'scribe_v2', endpoint: 'transcription' },
        { id: 'scribe_v1', endpoint: 'transcription' },
      ],
    },
  ],
};
