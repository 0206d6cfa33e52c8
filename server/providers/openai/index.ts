// OpenAI: serves the Responses format natively; chat and Messages go through chat completions.
// No video adapter: OpenAI's video API (Sora) was shut down on 2026-09-24.
import type { VendorManifest } from '../manifest.ts';
import { openAiChat } from './chat.ts';
import { openaiClient } from './client.ts';
import { openAiEmbeddings } from './embeddings.ts';
import { openAiImages } from './images.ts';
import { openAiModeration } from './moderation.ts';
import { openAiResponses } from './responses.ts';
import { openAiSpeech } from './speech.ts';
import { openAiTranscription } from './transcription.ts';

export const openai: VendorManifest = {
  type: 'openai',
  client: openaiClient,
  adapters: { chat: openAiChat, messages: openAiChat, responses: openAiResponses, embeddings: openAiEmbeddings, moderation: openAiModeration, images: openAiImages, speech: openAiSpeech, transcription: openAiTranscription },
  catalogVendor: 'openai',
};
