// Any server speaking OpenAI's wire (vLLM, Ollama, OpenRouter, ...): chat completions for every
// text format, images through chat `modalities` and video through `/videos`, as OpenRouter serves
// them. Its model ids are used as they are in the catalogs (they are OpenRouter's).
import type { VendorManifest } from '../manifest.ts';
import { allTextFormats } from '../capabilities.ts';
import { openAiChat } from '../openai/chat.ts';
import { openaiClient } from '../openai/client.ts';
import { openAiEmbeddings } from '../openai/embeddings.ts';
import { openAiModeration } from '../openai/moderation.ts';
import { openAiSpeech } from '../openai/speech.ts';
import { openAiTranscription } from '../openai/transcription.ts';
import { openRouterImages } from './images.ts';
import { openRouterVideo } from './video.ts';

export const openaiCompatible: VendorManifest = {
  type: 'openai-compatible',
  client: openaiClient,
  adapters: { ...allTextFormats(openAiChat), embeddings: openAiEmbeddings, moderation: openAiModeration, images: openRouterImages, video: openRouterVideo, speech: openAiSpeech, transcription: openAiTranscription },
  builtins: [
    {
      id: 'openrouter',
      resells: true,
      env: 'OPENROUTER_API_KEY',
      base_url: 'https://openrouter.ai/api/v1',
      models: [
        { id: 'openrouter/auto', endpoint: 'chat' },
        { id: 'meta-llama/llama-3.3-70b-instruct', endpoint: 'chat' },
        { id: 'deepseek/deepseek-chat', endpoint: 'chat' },
        { id: 'google/gemini-2.5-flash-image', endpoint: 'images' },
      ],
    },
  ],
};
