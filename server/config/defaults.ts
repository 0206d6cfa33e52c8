// What the gateway serves with no config file: each built-in provider whose key is in the
// environment, with a model list of its current mainstream models.
import type { BillingRules } from './billing-rules.ts';
import type { GatewayConfigInput, ProviderType } from './schema.ts';

type Builtin = {
  id: string;
  type: ProviderType;
  env: string;
  base_url: string;
  /** `billing`: where a model's work costs other than the default rule (server/config/billing-rules.ts) says, in proportion to list prices. */
  models: { id: string; endpoint: NonNullable<GatewayConfigInput['models']>[number]['endpoint']; upstream?: string; billing?: BillingRules }[];
};

export const builtinProviders: Builtin[] = [
  {
    id: 'openai',
    type: 'openai',
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
  {
    id: 'anthropic',
    type: 'anthropic',
    env: 'ANTHROPIC_API_KEY',
    base_url: 'https://api.anthropic.com/v1',
    models: [
      { id: 'claude-sonnet-4-5', endpoint: 'messages' },
      { id: 'claude-haiku-4-5', endpoint: 'messages' },
      { id: 'claude-opus-4-1', endpoint: 'messages' },
    ],
  },
  {
    id: 'gemini',
    type: 'gemini',
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
  {
    id: 'elevenlabs',
    type: 'elevenlabs',
    env: 'ELEVENLABS_API_KEY',
    base_url: 'https://api.elevenlabs.io/v1',
    models: [
      { id: 'eleven_v3', endpoint: 'speech' },
      { id: 'eleven_flash_v2', endpoint: 'speech' },
      { id: 'eleven_turbo_v2', endpoint: 'speech' },
      { id: 'scribe_v2', endpoint: 'transcription' },
      { id: 'scribe_v1', endpoint: 'transcription' },
    ],
  },
  {
    id: 'openrouter',
    type: 'openai-compatible',
    env: 'OPENROUTER_API_KEY',
    base_url: 'https://openrouter.ai/api/v1',
    models: [
      { id: 'openrouter/auto', endpoint: 'chat' },
      { id: 'meta-llama/llama-3.3-70b-instruct', endpoint: 'chat' },
      { id: 'deepseek/deepseek-chat', endpoint: 'chat' },
      { id: 'google/gemini-2.5-flash-image', endpoint: 'images' },
    ],
  },
];

/** A config built from the environment; `enabled` lists the providers found. */
export function configFromEnvironment(env: NodeJS.ProcessEnv): { config: GatewayConfigInput; enabled: string[] } {
  const config: GatewayConfigInput = { providers: [], models: [] };
  const enabled: string[] = [];
  const taken = new Set<string>();
  for (const p of builtinProviders) {
    const key = env[p.env];
    if (!key) continue;
    enabled.push(p.id);
    config.providers!.push({ id: p.id, type: p.type, base_url: p.base_url, api_key: key });
    for (const m of p.models) {
      if (taken.has(m.id)) continue;
      taken.add(m.id);
      config.models!.push({
        id: m.id,
        endpoint: m.endpoint,
        upstreams: [{ provider: p.id, model: m.upstream ?? m.id }],
        ...(m.billing ? { billing: m.billing } : {}),
      });
    }
  }
  return { config, enabled };
}
