import { z } from 'zod';

const flag = z.boolean().nullable();

const usd = (what: string) => z.string().nullable().describe(what);

export const ModelPricing = z
  .object({
    prompt: usd('Per input token (uncached text input; image input tokens too).'),
    completion: usd('Per output token.'),
    image: usd('Per generated image (images models).'),
    request: usd('Per request, on top of its tokens; null: none.'),
    input_cache_read: usd('Per input token read from the prompt cache; null: charged at `prompt`.'),
    input_cache_write: usd('Per input token written to the prompt cache (Anthropic’s 5-minute cache).'),
    input_cache_write_1h: usd('Per input token written to Anthropic’s 1-hour cache.'),
    internal_reasoning: usd('Per reasoning (thinking) token; null: charged at `completion`, as providers bill it.'),
    web_search: usd('Per web search the provider ran.'),
    input_audio: usd('Per audio input token.'),
    input_image: usd('Per image input token; null: charged at `prompt` (as chat models bill images).'),
    output_audio: usd('Per audio output token.'),
    output_image: usd('Per image output token (models that report image tokens).'),
    video_second: usd('Per second of generated video.'),
    character: usd('Per character of speech input.'),
    audio_minute: usd('Per minute of transcribed audio.'),
  })
  .meta({
    id: 'ModelPricing',
    description:
      'US dollars as decimal strings, from the config, else from the catalog metadata (OpenRouter), field by field. null = unknown: a request that used a bucket without a price has no cost (null), never 0.',
  });

export const ModelEndpoint = z
  .enum(['chat', 'messages', 'responses', 'generate_content', 'images', 'video', 'speech', 'transcription', 'embeddings', 'moderation'])
  .meta({ id: 'ModelEndpoint', description: 'The API surface a model works with. Text models (chat/messages/responses/generate_content) are served by all four text endpoints: chat completions, Messages, Responses and Gemini’s generateContent.' });

export const ModelBilling = z
  .object({
    unit: z
      .enum(['token', 'image', 'video_second', 'character', 'audio_minute'])
      .describe('What the model is billed by: tokens (text, embeddings, moderation), generated images, seconds of video, characters of speech input, or minutes of transcribed audio.'),
    tokens_per_unit: z
      .number()
      .describe(
        'Quota tokens one unit counts for, before `token_multiplier` (1 for tokens). When an upstream reports token usage for non-token work (gpt-image-1, gpt-4o-transcribe), the reported tokens are billed instead; the unit rule still sizes the reservation made at admission.',
      ),
    weights: z
      .object({
        input: z.number(),
        cache_read: z.number(),
        cache_write: z.number(),
        cache_write_1h: z.number(),
        audio_input: z.number(),
        image_input: z.number(),
        output: z.number(),
        reasoning: z.number(),
        audio_output: z.number(),
        image_output: z.number(),
      })
      .describe(
        'What one token of each usage bucket counts for in the quota, before `token_multiplier` (config `billing.weights`; 1 unless set). The buckets do not overlap: `input` is uncached text input, `output` text output without reasoning.',
      ),
  })
  .meta({ id: 'ModelBilling', description: 'How a request to this model counts against the daily token quota: units × tokens_per_unit × token_multiplier.' });

export const CatalogEntry = z
  .object({
    id: z.string(),
    object: z.literal('model'),
    created: z.number().int().describe('Unix seconds; the time the gateway loaded its configuration.'),
    owned_by: z.string().describe('Provider name (the first upstream).'),
    endpoint: ModelEndpoint,
    token_multiplier: z.number(),
    billing: ModelBilling,
    premium: z.boolean(),
    required_plan: z.string(),
    context_window: z.number().int().nullable(),
    max_output_tokens: z.number().int().nullable(),
    supports_vision: flag,
    supports_tools: flag,
    supports_function_calling: flag.describe('Same value as supports_tools.'),
    supports_reasoning: flag,
    supports_json_mode: flag,
    supports_audio_input: flag,
    supports_image_output: flag,
    supports_streaming: flag,
    input_modalities: z.array(z.string()).nullable(),
    output_modalities: z.array(z.string()).nullable(),
    modality: z.string().nullable(),
    tokenizer: z.string().nullable(),
    description: z.string().nullable(),
    pricing: ModelPricing.nullable(),
    metadata_source: z.enum(['openrouter', 'poe']).nullable(),
    metadata_status: z.enum(['known', 'unknown']),
  })
  .meta({ id: 'CatalogEntry', description: 'One model of the catalog. Unknown values are null, never 0 or false.' });
export type CatalogEntry = z.infer<typeof CatalogEntry>;

export const ModelList = z.object({ object: z.literal('list'), data: z.array(CatalogEntry) }).meta({ id: 'ModelList' });

export const ModelStatusQuery = z.object({
  model: z.string().optional().describe('Only this model.'),
  window: z
    .enum(['1h', '24h', '7d', '30d'])
    .default('24h')
    .describe('How far back the history goes: 1h in 5-minute buckets, 24h and 7d in hourly buckets, 30d in daily buckets.'),
});

const HealthBucket = z.object({
  start: z.string().describe('ISO 8601 start of the bucket'),
  requests: z.number().int().describe('Upstream attempts (failovers included).'),
  errors: z.number().int(),
  availability: z.number().nullable().describe('Successful / all attempts in the bucket, 0–1; null without traffic.'),
  latency_ms_avg: z.number().nullable(),
  latency_ms_p50: z.number().nullable().describe('Median attempt latency, interpolated within its histogram bucket (bounds 50, 100, 250, 500 ms, 1, 2.5, 5, 10, 30 s) and never above the largest latency observed.'),
});

export const ModelStatus = z
  .object({
    model: z.string(),
    status: z
      .enum(['operational', 'degraded', 'down', 'unknown', 'misconfigured'])
      .describe(
        'From the last 15 minutes: ≥ 99% → operational, ≥ 50% → degraded, else down; unknown without traffic. ' +
          '`misconfigured` whatever the traffic: none of its upstreams can work (each one’s provider lacks its credential, see `problem`), so every request to it fails and counts as an error.',
      ),
    problem: z.string().nullable().describe('Why the model is `misconfigured` (e.g. `openai has no api_key`, one reason per provider); null otherwise.'),
    availability: z.number().nullable().describe('Over the whole window, 0–1.'),
    error_rate: z.number().nullable(),
    requests: z.number().int(),
    errors: z.number().int(),
    latency_ms_avg: z.number().nullable(),
    latency_ms_p50: z.number().nullable(),
    last_success_at: z.string().nullable(),
    last_error_at: z.string().nullable(),
    last_error: z.string().nullable().describe('Class of the latest error: `http_<status>`, `upstream_timeout`, `upstream_unreachable`, …'),
    upstreams: z.array(
      z.object({
        provider: z.string(),
        requests: z.number().int(),
        errors: z.number().int(),
        availability: z.number().nullable(),
        latency_ms_p50: z.number().nullable(),
        last_error: z.string().nullable(),
        last_error_at: z.string().nullable(),
      }),
    ),
    history: z.array(HealthBucket).describe('Oldest first: 5-minute buckets for 1h, hourly for 24h and 7d, daily for 30d (`window.bucket_seconds`).'),
  })
  .meta({ id: 'ModelStatus' });

export const ModelStatusList = z
  .object({
    object: z.literal('list'),
    window: z.object({ start: z.string(), end: z.string(), bucket_seconds: z.number().int() }),
    data: z.array(ModelStatus),
  })
  .meta({ id: 'ModelStatusList', description: 'Rolling availability and error-rate history per model, from the gateway’s own upstream attempts. No authentication needed.' });
