import type { ProviderConfig, ResolvedConfig } from '../config/schema.ts';
import { errors } from '../http/errors.ts';
import { anthropicMessages } from '../providers/anthropic/messages.ts';
import { geminiGenerateContent } from '../providers/gemini/generate-content.ts';
import { openAiChat } from '../providers/openai/chat.ts';
import { openAiResponses } from '../providers/openai/responses.ts';
import type { TextProvider } from '../providers/types.ts';

export type TextFormat = 'openai-chat' | 'openai-responses' | 'anthropic' | 'gemini';
type ModelConfig = ResolvedConfig['models'][number];

export type Target = { provider: ProviderConfig; upstreamModel: string; format: TextFormat; wire: TextProvider };

const formats: Partial<Record<ProviderConfig['type'], [TextFormat, TextProvider]>> = {
  openai: ['openai-chat', openAiChat],
  'openai-compatible': ['openai-chat', openAiChat],
  anthropic: ['anthropic', anthropicMessages],
  gemini: ['gemini', geminiGenerateContent],
};

export const TEXT_ENDPOINTS = new Set(['chat', 'messages', 'responses']);

/**
 * The model's upstreams able to generate text, in failover order. OpenAI itself serves the
 * Responses endpoint natively; OpenAI-compatible servers are chat-only.
 */
export function textTargets(model: ModelConfig, providers: Map<string, ProviderConfig>, endpoint: 'chat' | 'messages' | 'responses' = 'chat'): Target[] {
  if (!TEXT_ENDPOINTS.has(model.endpoint)) {
    throw errors.invalid(`The model '${model.id}' is a ${model.endpoint} model; it cannot be used for text generation.`, 'model', 'model_not_supported');
  }
  const targets: Target[] = [];
  for (const u of model.upstreams) {
    const provider = providers.get(u.provider)!;
    const f: [TextFormat, TextProvider] | undefined =
      endpoint === 'responses' && provider.type === 'openai' ? ['openai-responses', openAiResponses] : formats[provider.type];
    if (f) targets.push({ provider, upstreamModel: u.model, format: f[0], wire: f[1] });
  }
  if (!targets.length) throw errors.invalid(`The model '${model.id}' has no text-generation upstream.`, 'model', 'model_not_supported');
  return targets;
}
