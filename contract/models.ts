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

// The catalog as Anthropic's Models API shows it (`anthropic-version` on the request: Anthropic's
// SDKs send it), its text models only, since they are what the Messages API serves.

const ModelLifecycle = z.enum(['active', 'deprecated', 'retired']);

/** `GET /v1/models`'s query: Anthropic's paging, read when the request carries `anthropic-version`. */
export const ModelListQuery = z.looseObject({
  limit: z.coerce.number().int().min(1).max(1000).optional().describe('With `anthropic-version`: models per page, 1 to 1000 (default 20).'),
  after_id: z.string().optional().describe('With `anthropic-version`: the page after this model (the `last_id` of the previous page).'),
  before_id: z.string().optional().describe('With `anthropic-version`: the page before this model (the `first_id` of the next page).'),
  lifecycle: z
    .union([ModelLifecycle, z.array(ModelLifecycle)])
    .optional()
    .describe('With `anthropic-version`: only models in these stages (also sent as `lifecycle[]`, as Anthropic’s SDKs do). Every model of the gateway is `active`.'),
});

export const AnthropicModelInfo = z
  .object({
    type: z.literal('model'),
    id: z.string().describe('The catalog id, sent as `model` to `/v1/messages`.'),
    display_name: z.string().describe('The id: the catalog has no other name.'),
    created_at: z.string().describe('RFC 3339; the time the gateway loaded its configuration (the catalog’s `created`).'),
    max_input_tokens: z.number().int().nullable().describe('The catalog’s `context_window`; null when unknown.'),
    max_tokens: z.number().int().nullable().describe('The catalog’s `max_output_tokens`; null when unknown.'),
    lifecycle: z.literal('active').describe('Every model the gateway serves is active.'),
    deprecated_at: z.null(),
    retires_at: z.null(),
    line: z.null().describe('The gateway does not group models into lines.'),
    capabilities: z.null().describe('Unknown in Anthropic’s terms: the catalog’s own entry (`GET /v1/models` without `anthropic-version`) says what the model supports.'),
  })
  .meta({ id: 'AnthropicModelInfo', description: 'One text model as Anthropic’s Models API describes one (`GET /v1/models/{model}` with `anthropic-version`).' });
export type AnthropicModelInfo = z.infer<typeof AnthropicModelInfo>;

export const AnthropicModelList = z
  .object({
    data: z.array(AnthropicModelInfo),
    has_more: z.boolean().describe('More models in the direction of paging (after the page; before it with `before_id`).'),
    first_id: z.string().nullable().describe('The first model of the page, the `before_id` of the page before; null when the page is empty.'),
    last_id: z.string().nullable().describe('The last model of the page, the `after_id` of the page after; null when the page is empty.'),
  })
  .meta({ id: 'AnthropicModelList', description: 'A page of the text models as Anthropic’s Models API lists them (`GET /v1/models` with `anthropic-version`), in catalog order.' });
export type AnthropicModelList = z.infer<typeof AnthropicModelList>;

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

const BreakerStatus = z
  .object({
    state: z
      .enum(['closed', 'open', 'half_open'])
      .describe('closed: tried as usual; open: skipped until `until` after failing (error rate or failures in a row); half_open: its cool-down is over and one probe request decides whether it closes or opens again.'),
    until: z.string().nullable().describe('ISO 8601 end of the open breaker’s cool-down (in the past while half-open); null when closed.'),
    reason: z.string().nullable().describe('Why it opened: the failure class and the rule (`http_503; error rate 60%`, `upstream_timeout; 5 failures in a row`); null when closed.'),
  })
  .describe('The upstream’s circuit breaker, as every instance sees it when the routing state is shared (Redis), else this instance’s.');

const UpstreamKeyStatus = z.object({
  key: z
    .string()
    .describe('The key’s label: `<provider>#<alias>`, or `<provider>#<index>` when it has no alias (its position in `api_keys` from 0, counting only the keys that are set). Never the key itself.'),
  requests: z.number().int().describe('Attempts made with this key in the window (the provider’s, for every upstream of the model on it).'),
  errors: z.number().int(),
  availability: z.number().nullable().describe('Successful / all attempts with this key, 0–1; null without traffic.'),
  latency_ms_p50: z.number().nullable().describe('Median attempt latency with this key, as the model’s `latency_ms_p50`.'),
  share: z.number().nullable().describe('This key’s share of the upstream’s attempts in the window, 0–1; null when the upstream had none.'),
  state: z.enum(['ready', 'cooling_down']).describe('cooling_down: the key got a 429, 401, 402 or 403 and is not used until `until` (by any instance, when the routing state is shared through Redis); ready otherwise.'),
  until: z.string().nullable().describe('ISO 8601 end of the cool-down; null when ready.'),
  reason: z.string().nullable().describe('What started the cool-down (`http_429`, `http_401`, `http_403`); null when ready.'),
  in_flight: z.number().int().describe('Attempts with this key under way on the instance that answered (not summed across instances).'),
});

const UpstreamStatus = z.object({
  provider: z.string(),
  upstream_model: z.string().describe('The model’s name at the provider (config `upstreams[].model`).'),
  weight: z.number().describe('The upstream’s configured weight: its relative share of the traffic under strategy `weighted` (0: a fallback only).'),
  requests: z
    .number()
    .int()
    .describe(
      'Attempts in the window. Attempts are recorded per provider (and key), not per upstream model: two upstreams of the model on the same provider each show their combined figures (requests, errors, availability, latency, share, keys).',
    ),
  errors: z.number().int(),
  availability: z.number().nullable(),
  latency_ms_p50: z.number().nullable(),
  share: z.number().nullable().describe('This upstream’s share of the model’s attempts in the window, 0–1 (failovers included); null when the model had none.'),
  last_error: z.string().nullable(),
  last_error_at: z.string().nullable(),
  breaker: BreakerStatus,
  in_flight: z.number().int().describe('Attempts to this upstream under way on the instance that answered (not summed across instances).'),
  latency_ms_ewma: z
    .number()
    .nullable()
    .describe('The moving average of its answer latency (first event of a stream) that strategy least-latency ranks by, on the instance that answered; null before its first answer there.'),
  keys: z
    .array(UpstreamKeyStatus)
    .describe('The keys of the provider’s `api_keys` pool, in the config’s order, each with its traffic and cool-down; empty for a provider with one `api_key` (or none).'),
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
    strategy: z
      .enum(['failover', 'weighted', 'least-latency', 'least-busy'])
      .describe('How the model’s first upstream is chosen (its config `strategy`): failover (in order), weighted, least-latency, least-busy.'),
    upstreams: z
      .array(UpstreamStatus)
      .describe(
        'One entry per configured upstream, in the config’s order, with or without traffic. Attempts of a provider no longer among the model’s upstreams count in the model’s figures only.',
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
