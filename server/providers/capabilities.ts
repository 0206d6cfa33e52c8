// What a model can be for, and the adapter type a vendor implements for each capability.
import type { Capability } from '../config/capabilities.ts';
import type { EmbeddingsAdapter } from './embeddings.ts';
import type { ImageAdapter, VideoAdapter } from './media.ts';
import type { ModerationAdapter } from './moderation.ts';
import type { SpeechAdapter } from './speech.ts';
import type { TranscriptionAdapter } from './transcription.ts';
import type { TextAdapter } from './types.ts';

/**
 * The adapter type of each capability. The text capabilities are the client's format (any text
 * model serves all four).
 */
export type CapabilityAdapters = {
  chat: TextAdapter;
  messages: TextAdapter;
  responses: TextAdapter;
  generate_content: TextAdapter;
  embeddings: EmbeddingsAdapter;
  moderation: ModerationAdapter;
  images: ImageAdapter;
  video: VideoAdapter;
  speech: SpeechAdapter;
  transcription: TranscriptionAdapter;
};

/** A vendor's adapters: a missing capability is one its providers cannot serve. */
export type AdapterRow = { [C in Capability]?: CapabilityAdapters[C] };

export const TEXT_CAPABILITIES: ReadonlySet<Capability> = new Set(['chat', 'messages', 'responses', 'generate_content']);

/** Chat-only upstreams: every text format is translated to and from the vendor's one text format. */
export const allTextFormats = (a: TextAdapter) => ({ chat: a, messages: a, responses: a, generate_content: a });

/** Whether a model declared with `endpoint` is served through `capability`: a text model serves all four text formats. */
export const servesCapability = (endpoint: Capability, capability: Capability) =>
  endpoint === capability || (TEXT_CAPABILITIES.has(endpoint) && TEXT_CAPABILITIES.has(capability));
