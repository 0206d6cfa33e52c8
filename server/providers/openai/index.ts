// OpenAI: serves the Responses format natively; chat and Messages go through chat completions.
// No video adapter: OpenAI's video API (Sora) was shut down on 2026-09-24.
import type { VendorManifest } from '../manifest.ts';
import { openAiImageTokens } from './image-tokens.ts';
import { openAiChat } from './chat.ts';
import { openaiClient } from './client.ts';
import { openAiEmbeddings } from './embeddings.ts';
import { openAiImages } from './images.ts';
import { openAiInputTokens, openAiResponsesInputTokens } from './input-tokens.ts';
import { openAiModeration } from './moderation.ts';
import { openAiResponses } from './responses.ts';
import { openAiSpeech } from './speech.ts';
import { openAiTranscription } from './transcription.ts';

// OpenAI counts input tokens itself; the same adapters on other OpenAI-wire servers do not.
const chat = { ...openAiChat, counter: openAiInputTokens };

export const openai: VendorManifest = {
  type: 'openai',
  client: openaiClient,
  adapters: { chat, messages: chat, generate_content: chat, responses: { ...openAiResponses, counter: openAiResponsesInputTokens }, embeddings: openAiEmbeddings, moderation: openAiModeration, images: openAiImages, speech: openAiSpeech, transcription: openAiTranscription },
  genAiProviderName: 'openai',
  catalogVendor: 'openai',
  imageTokens: openAiImageTokens,
  builtins: [
    {
      id: 'openai',
      env: 'OPENAI_API_KEY',
      base_url: 'https://api.openai.com/v1',
      models: [
        { id: 'gpt-4o-mini', endpoint: 'chat' },
        { id: 'gpt-4o', endpoint: 'chat' },
        { id: 'gpt-4.1', endpoint: 'chat' },
        { id: 'gpt-4.1-mini', endpoint: 'chat' },
        { id: 'o4-mini', endpoint: 'chat' },
        { id: 'gpt-image-1', endpoint: 'images' },
        { id: 'gpt-image-1-mini', endpoint: 'images' },
        { id: 'dall-e-3', endpoint: 'images', billing: { tokens_per_image: 2000 } }, // $0.04 a standard image, twice a medium gpt-image-1
        { id: 'tts-1', endpoint: 'speech' },
        { id: 'tts-1-hd', endpoint: 'speech', billing: { tokens_per_1k_characters: 500 } }, // twice tts-1's price
        { id: 'gpt-4o-mini-tts', endpoint: 'speech' },
        { id: 'whisper-1', endpoint: 'transcription' },
        { id: 'gpt-4o-transcribe', endpoint: 'transcription' },
        { id: 'gpt-4o-mini-transcribe', endpoint: 'transcription', billing: { tokens_per_audio_minute: 500 } }, // half of whisper-1's
        { id: 'text-embedding-3-small', endpoint: 'embeddings' },
        { id: 'text-embedding-3-large', endpoint: 'embeddings' },
        { id: 'omni-moderation-latest', endpoint: 'moderation' },
        { id: 'text-moderation-latest', endpoint: 'moderation', upstream: 'omni-moderation-latest' },
        { id: 'text-moderation-stable', endpoint: 'moderation', upstream: 'omni-moderation-latest' },
      ],
    },
  ],
};
