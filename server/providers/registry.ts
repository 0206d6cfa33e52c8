// Which provider type serves which capability, and with which adapter: the one table routing
// (routing/targets.ts) and `config check` (config/warnings.ts) read. A missing entry means the
// type cannot serve that capability: its upstreams are never tried for it, and a model whose
// upstreams all lack it is reported when the config is checked. A capability lands by adding its
// adapter file under providers/<vendor>/ and its lines here.
import type { z } from 'zod';
import { ModelEndpoint } from '../../contract/models.ts';
import type { ProviderType } from '../config/schema.ts';
import { anthropicMessages } from './anthropic/messages.ts';
import { geminiEmbeddings } from './gemini/embeddings.ts';
import { geminiGenerateContent } from './gemini/generate-content.ts';
import { openAiChat } from './openai/chat.ts';
import { openAiEmbeddings } from './openai/embeddings.ts';
import { openAiModeration } from './openai/moderation.ts';
import { openAiResponses } from './openai/responses.ts';
import type { EmbeddingsAdapter, ModerationAdapter, TextProvider } from './types.ts';

export type Capability = z.infer<typeof ModelEndpoint>;

/** The wire format a text adapter speaks: a client request in the same format passes through untranslated. */
export type TextFormat = 'openai-chat' | 'openai-responses' | 'anthropic' | 'gemini';
export type TextAdapter = { format: TextFormat; wire: TextProvider };

/** The adapter type of each capability; the media ones arrive with their issues. */
export type Adapters = {
  chat: TextAdapter;
  messages: TextAdapter;
  responses: TextAdapter;
  embeddings: EmbeddingsAdapter;
  moderation: ModerationAdapter;
  images: never;
  video: never;
  speech: never;
  transcription: never;
};

const chat: TextAdapter = { format: 'openai-chat', wire: openAiChat };
const anthropic: TextAdapter = { format: 'anthropic', wire: anthropicMessages };
const gemini: TextAdapter = { format: 'gemini', wire: geminiGenerateContent };

export const registry: { [T in ProviderType]: { [C in Capability]?: Adapters[C] } } = {
  // OpenAI serves the Responses endpoint natively; every other type gets it translated.
  openai: { chat, messages: chat, responses: { format: 'openai-responses', wire: openAiResponses }, embeddings: openAiEmbeddings, moderation: openAiModeration },
  'openai-compatible': { chat, messages: chat, responses: chat, embeddings: openAiEmbeddings, moderation: openAiModeration },
  anthropic: { chat: anthropic, messages: anthropic, responses: anthropic },
  gemini: { chat: gemini, messages: gemini, responses: gemini, embeddings: geminiEmbeddings },
  elevenlabs: {},
};

export function adapterFor<C extends Capability>(type: ProviderType, capability: C): Adapters[C] | undefined {
  return registry[type][capability] as Adapters[C] | undefined;
}

/** The text endpoints: a text model (endpoint chat, messages or responses) serves all three. */
export const TEXT_CAPABILITIES: ReadonlySet<Capability> = new Set(['chat', 'messages', 'responses']);

/** Whether a model declared with `endpoint` is served through `capability`. */
export const servesCapability = (endpoint: Capability, capability: Capability) =>
  endpoint === capability || (TEXT_CAPABILITIES.has(endpoint) && TEXT_CAPABILITIES.has(capability));

/** Capabilities with at least one adapter: the others are not built yet (their routes answer 501). */
export const builtCapabilities = (): Capability[] => ModelEndpoint.options.filter((c) => Object.values(registry).some((r) => r[c] !== undefined));
