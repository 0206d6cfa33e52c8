// Google's Gemini API: generateContent for every text format; Imagen's `:predict` is shut down on
// the Gemini API, so images come from the Gemini image models, video from Veo.
import { allTextFormats } from '../capabilities.ts';
import type { VendorManifest } from '../manifest.ts';
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
  catalogVendor: 'google',
};
