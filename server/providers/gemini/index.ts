// Google's Gemini API: generateContent for every text format; Imagen's `:predict` is shut down on
// the Gemini API, so images come from the Gemini image models, video from Veo.
import { allTextFormats } from '../capabilities.ts';
import type { VendorManifest } from '../manifest.ts';
import { geminiImageTokens } from './image-tokens.ts';
import { geminiClient } from './client.ts';
import { geminiEmbeddings } from './embeddings.ts';
import { geminiGenerateContent } from './generate-content.ts';
import { geminiImages } from './images.ts';
import { geminiSpeech } from './speech.ts';
import { geminiVideo } from './video.ts';

export const gemini: VendorManifest = {
  type: 'gemini',
  client: geminiClient,
  adapters: { ...allTextFormats(geminiGenerateContent), embeddings: geminiEmbeddings, images: geminiImages, video: geminiVideo, speech: geminiSpeech },
  genAiProviderName: 'gcp.gemini',
  catalogVendor: 'google',
  imageTokens: geminiImageTokens,
  builtins: [
    {
      id: 'gemini',
      env: 'GEMINI_API_KEY',
      base_url: 'https://generativelanguage.googleapis.com/v1beta',
      models: [
        { id: 'gemini-2.5-flash', endpoint: 'chat' },
        { id: 'gemini-2.5-pro', endpoint: 'chat' },
        { id: 'gemini-2.5-flash-lite', endpoint: 'chat' },
        { id: 'gemini-2.5-flash-image', endpoint: 'images' },
        { id: 'gemini-3-pro-image-preview', endpoint: 'images', billing: { tokens_per_image: 3000 } }, // about three times 2.5-flash-image's price
        { id: 'veo-3.1-generate-preview', endpoint: 'video' },
        { id: 'veo-3.1-fast-generate-preview', endpoint: 'video', billing: { tokens_per_video_second: 4000 } }, // 40% of Veo 3.1's price a second
        { id: 'gemini-2.5-flash-preview-tts', endpoint: 'speech' },
        { id: 'gemini-embedding-001', endpoint: 'embeddings' },
      ],
    },
  ],
};
