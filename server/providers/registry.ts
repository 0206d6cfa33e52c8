// Which provider type serves which capability, and with which adapter: the one table. A missing
// entry means the type cannot serve that capability: routing never offers such an upstream
// (routing/targets.ts) and the config refuses one (`vendorIssues`, shown by `config check`).
// A capability gets a vendor by adding its adapter file (providers/<vendor>/<capability>.ts) and
// one line here.
import type { z } from 'zod';
import { ModelEndpoint } from '../../contract/models.ts';
import { list, str, type ProviderType } from '../config/schema.ts';
import { anthropicMessages } from './anthropic/messages.ts';
import type { EmbeddingsAdapter } from './embeddings.ts';
import { geminiEmbeddings } from './gemini/embeddings.ts';
import { geminiGenerateContent } from './gemini/generate-content.ts';
import type { ModerationAdapter } from './moderation.ts';
import { openAiChat } from './openai/chat.ts';
import { openAiEmbeddings } from './openai/embeddings.ts';
import { openAiModeration } from './openai/moderation.ts';
import { openAiResponses } from './openai/responses.ts';
import type { TextAdapter } from './types.ts';
import type { ImageAdapter, VideoAdapter } from './media.ts';
import type { SpeechAdapter } from './speech.ts';
import type { TranscriptionAdapter } from './transcription.ts';
import { openAiTranscription } from './openai/transcription.ts';
import { elevenLabsTranscription } from './elevenlabs/transcription.ts';
import { openAiSpeech } from './openai/speech.ts';
import { elevenLabsSpeech } from './elevenlabs/speech.ts';
import { geminiSpeech } from './gemini/speech.ts';
import { openAiImages } from './openai/images.ts';
import { geminiImages } from './gemini/images.ts';
import { geminiVideo } from './gemini/video.ts';
import { openRouterImages } from './openrouter/images.ts';
import { openRouterVideo } from './openrouter/video.ts';

/** What a model is for: the API surface it is configured with (contract ModelEndpoint). */
export type Capability = z.infer<typeof ModelEndpoint>;

/**
 * The adapter type of each capability. The text capabilities are the client's format (any text
 * model serves all three). The media capabilities' request and answer types arrive with their
 * endpoints, each replacing its placeholder here.
 */
export type CapabilityAdapters = {
  chat: TextAdapter;
  messages: TextAdapter;
  responses: TextAdapter;
  embeddings: EmbeddingsAdapter;
  moderation: ModerationAdapter;
  images: ImageAdapter;
  video: VideoAdapter;
  speech: SpeechAdapter;
  transcription: TranscriptionAdapter;
};

export const TEXT_CAPABILITIES: ReadonlySet<Capability> = new Set(['chat', 'messages', 'responses']);

type Row = { [C in Capability]?: CapabilityAdapters[C] };

/** Chat-only upstreams: every text format is translated to and from chat completions. */
const chatText = (a: TextAdapter) => ({ chat: a, messages: a, responses: a });

export const registry: Record<ProviderType, Row> = {
  // OpenAI serves the Responses format natively; chat and Messages go through chat completions.
  // No video adapter: OpenAI's video API (Sora) was shut down on 2026-09-24.
  openai: { chat: openAiChat, messages: openAiChat, responses: openAiResponses, embeddings: openAiEmbeddings, moderation: openAiModeration, images: openAiImages, speech: openAiSpeech, transcription: openAiTranscription },
  // Images through chat `modalities` and video through `/videos`, as OpenRouter serves them.
  'openai-compatible': { ...chatText(openAiChat), embeddings: openAiEmbeddings, moderation: openAiModeration, images: openRouterImages, video: openRouterVideo, speech: openAiSpeech, transcription: openAiTranscription },
  anthropic: { ...chatText(anthropicMessages) },
  // Imagen's `:predict` is shut down on the Gemini API: images come from the Gemini image models, video from Veo.
  gemini: { ...chatText(geminiGenerateContent), embeddings: geminiEmbeddings, images: geminiImages, video: geminiVideo, speech: geminiSpeech },
  elevenlabs: { speech: elevenLabsSpeech, transcription: elevenLabsTranscription },
};

/** The adapter serving `capability` on providers of `type`, or undefined: it cannot. */
export function adapterFor<C extends Capability>(type: ProviderType, capability: C): CapabilityAdapters[C] | undefined {
  return registry[type][capability] as CapabilityAdapters[C] | undefined;
}

/** Whether a model declared with `endpoint` is served through `capability`: a text model serves all three text formats. */
export const servesCapability = (endpoint: Capability, capability: Capability) =>
  endpoint === capability || (TEXT_CAPABILITIES.has(endpoint) && TEXT_CAPABILITIES.has(capability));

/** Capabilities some provider type serves (all, today); a capability no type serves would have no upstream judged. */
export const builtCapabilities = (): Capability[] => ModelEndpoint.options.filter((c) => Object.values(registry).some((row) => row[c] !== undefined));

/** The provider types that can serve `capability`, or null for a capability not built yet. */
export function typesServing(capability: Capability): ProviderType[] | null {
  if (!builtCapabilities().includes(capability)) return null;
  return (Object.keys(registry) as ProviderType[]).filter((t) => registry[t][capability] !== undefined);
}

/**
 * Upstreams whose provider type cannot serve their model's endpoint (another type would never be
 * tried). Reads the input defensively, like the config's own reference checks, so the loader reports
 * them together with shape errors elsewhere in the file.
 */
export function vendorIssues(input: unknown): { path: (string | number)[]; message: string }[] {
  const cfg = input && typeof input === 'object' ? (input as Record<string, unknown>) : {};
  const types = new Map(list(cfg.providers).flatMap((p) => (str(p.id) !== undefined && str(p.type) !== undefined ? [[str(p.id)!, str(p.type)!]] : [])));
  const issues: { path: (string | number)[]; message: string }[] = [];
  list(cfg.models).forEach((m, i) => {
    const endpoint = ModelEndpoint.safeParse(m.endpoint);
    const serving = endpoint.success ? typesServing(endpoint.data) : null;
    list(m.upstreams).forEach((u, j) => {
      const provider = str(u.provider);
      const type = provider === undefined ? undefined : types.get(provider);
      if (type && serving && !serving.includes(type as ProviderType)) {
        issues.push({ path: ['models', i, 'upstreams', j, 'provider'], message: `provider "${provider}" is ${type}, which cannot serve ${m.endpoint} (served by: ${serving.join(', ')})` });
      }
    });
  });
  return issues;
}
