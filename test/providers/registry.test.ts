// The capability registry: one table says which provider type serves which capability, with which
// wire format; routing and config check read it.
import { describe, expect, it } from 'vitest';
import { ModelEndpoint } from '../../contract/models.ts';
import type { ProviderType } from '../../server/config/schema.ts';
import { VENDORS, builtCapabilities, registry, typesServing } from '../../server/providers/registry.ts';
import { targetsFor } from '../../server/routing/targets.ts';

describe('registry', () => {
  it('every provider type × capability, exactly', () => {
    const table = Object.fromEntries(
      VENDORS.map(({ type: t }) => [t, Object.fromEntries(ModelEndpoint.options.map((c) => { const a: any = registry[t]![c]; return [c, a ? (a.format ?? 'yes') : null]; }))]),
    );
    expect(table).toEqual({
      // No video: OpenAI's video API (Sora) was shut down.
      openai: { chat: 'openai-chat', messages: 'openai-chat', responses: 'openai-responses', generate_content: 'openai-chat', embeddings: 'yes', moderation: 'yes', images: 'yes', video: null, speech: 'yes', transcription: 'yes' },
      'openai-compatible': { chat: 'openai-chat', messages: 'openai-chat', responses: 'openai-chat', generate_content: 'openai-chat', embeddings: 'yes', moderation: 'yes', images: 'yes', video: 'yes', speech: 'yes', transcription: 'yes' },
      anthropic: { chat: 'anthropic', messages: 'anthropic', responses: 'anthropic', generate_content: 'anthropic', embeddings: null, moderation: null, images: null, video: null, speech: null, transcription: null },
      gemini: { chat: 'gemini', messages: 'gemini', responses: 'gemini', generate_content: 'gemini', embeddings: 'yes', moderation: null, images: 'yes', video: 'yes', speech: 'yes', transcription: null },
      elevenlabs: { chat: null, messages: null, responses: null, generate_content: null, embeddings: null, moderation: null, images: null, video: null, speech: 'yes', transcription: 'yes' },
    });
    expect(builtCapabilities()).toEqual(['chat', 'messages', 'responses', 'generate_content', 'images', 'video', 'speech', 'transcription', 'embeddings', 'moderation']);
    expect(typesServing('embeddings')).toEqual(['openai', 'openai-compatible', 'gemini']);
    expect(typesServing('images')).toEqual(['openai', 'openai-compatible', 'gemini']);
    expect(typesServing('video')).toEqual(['openai-compatible', 'gemini']);
    expect(typesServing('speech')).toEqual(['openai', 'openai-compatible', 'gemini', 'elevenlabs']);
    expect(typesServing('transcription')).toEqual(['openai', 'openai-compatible', 'elevenlabs']);
  });

  it('targetsFor keeps the configured order, skips types without the capability, and refuses other kinds of model', () => {
    const p = (id: string, type: ProviderType) => [id, { id, type }] as const;
    const providers = new Map([p('a', 'anthropic'), p('o', 'openai'), p('g', 'gemini')]) as never;
    const model = (endpoint: string, ...ids: string[]) => ({ id: 'm', endpoint, upstreams: ids.map((provider) => ({ provider, model: `${provider}-x` })) }) as never;
    expect(targetsFor(model('embeddings', 'g', 'o'), 'embeddings', providers).map((c) => c.provider.id)).toEqual(['g', 'o']);
    expect(targetsFor(model('chat', 'a', 'o'), 'responses', providers).map((c) => [c.provider.id, (c.adapter as any).format])).toEqual([['a', 'anthropic'], ['o', 'openai-responses']]);
    expect(() => targetsFor(model('chat', 'o'), 'embeddings', providers)).toThrow("The model 'm' is a chat model, not an embeddings model.");
    expect(() => targetsFor(model('embeddings', 'o'), 'chat', providers)).toThrow("The model 'm' is an embeddings model; it cannot be used for text generation.");
    expect(() => targetsFor(model('moderation', 'a'), 'moderation', providers)).toThrow("The model 'm' has no moderation upstream.");
  });
});
