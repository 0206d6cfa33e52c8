// Which provider type serves which capability, and with which adapter: the one table. A missing
// entry means the type cannot serve that capability; `config check` reports such upstreams
// (config/warnings.ts) and routing never offers them (routing/targets.ts). A capability gets a
// vendor by adding its adapter file (providers/<vendor>/<capability>.ts) and one line here.
import type { z } from 'zod';
import type { ModelEndpoint } from '../../contract/models.ts';
import type { ProviderType } from '../config/schema.ts';
import type { Adapter } from './adapter.ts';
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

/** What a model is for: the API surface it is configured with (contract ModelEndpoint). */
export type Capability = z.infer<typeof ModelEndpoint>;

/**
 * The adapter type of each capability. The text capabilities are the client's format (any text
 * model serves all three). The media capabilities' request and answer types arrive with their
 * endpoints (issue 17, later parts), each replacing its placeholder here.
 */
export type CapabilityAdapters = {
  chat: TextAdapter;
  messages: TextAdapter;
  responses: TextAdapter;
  embeddings: EmbeddingsAdapter;
  moderation: ModerationAdapter;
  images: Adapter<unknown, unknown>;
  video: Adapter<unknown, unknown>;
  speech: Adapter<unknown, unknown>;
  transcription: Adapter<unknown, unknown>;
};

export const TEXT_CAPABILITIES: ReadonlySet<Capability> = new Set(['chat', 'messages', 'responses']);

type Row = { [C in Capability]?: CapabilityAdapters[C] };

/** Chat-only upstreams: every text format is translated to and from chat completions. */
const chatText = (a: TextAdapter) => ({ chat: a, messages: a, responses: a });

export const registry: Record<ProviderType, Row> = {
  // OpenAI serves the Responses format natively; chat and Messages go through chat completions.
  openai: { chat: openAiChat, messages: openAiChat, responses: openAiResponses, embeddings: openAiEmbeddings, moderation: openAiModeration },
  'openai-compatible': { ...chatText(openAiChat), embeddings: openAiEmbeddings, moderation: openAiModeration },
  anthropic: { ...chatText(anthropicMessages) },
  gemini: { ...chatText(geminiGenerateContent), embeddings: geminiEmbeddings },
  elevenlabs: {},
};

/** The adapter serving `capability` on providers of `type`, or undefined: it cannot. */
export function adapterFor<C extends Capability>(type: ProviderType, capability: C): CapabilityAdapters[C] | undefined {
  return registry[type][capability] as CapabilityAdapters[C] | undefined;
}

/**
 * Whether any provider type serves `capability` yet. One nobody serves is not built (its routes
 * answer 501), so its models' upstreams are not judged by `config check`.
 */
export const isBuilt = (capability: Capability) => Object.values(registry).some((row) => row[capability] !== undefined);
