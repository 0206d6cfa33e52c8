import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { ModelEndpoint } from '../../contract/models.ts';
import { UsdBudget } from '../../contract/usage.ts';
import { ENDPOINT_UNITS, RULES, endpointsOfUnit, type RuleName } from './billing-rules.ts';

/** A vendor's provider type; which ones exist is the vendors' manifests' to say (providers/registry.ts `vendorIssues` refuses others). */
export const ProviderType = z.string().min(1);
export type ProviderType = z.infer<typeof ProviderType>;

const id = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]*$/, { message: 'use letters, digits and . _ : / -' });

/** One credential of a provider's key pool, with the limits its account has (docs/routing.md "Key pools"). */
export const PoolKeyConfig = z.strictObject({
  key: z.string().min(1),
  alias: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9._-]{0,63}$/, { message: 'a name: a letter, then letters, digits and . _ - (at most 64)' })
    .optional()
    .describe('Names the key in X-Gateway-Upstream, logs, metrics and the health views (default: its index in the list, from 0).'),
  requests_per_minute: z.number().int().positive().optional().describe("The key's request limit at the provider: never more in any 60 seconds, across all instances."),
  tokens_per_minute: z.number().int().positive().optional().describe("The key's token limit at the provider (input and output), counted in any 60 seconds across all instances."),
  max_concurrency: z.number().int().positive().optional().describe('Requests in flight on this key at once, across all instances.'),
});
export type PoolKeyConfig = z.infer<typeof PoolKeyConfig>;

/**
 * A pool's keys whose value came out empty (`\${OPENAI_API_KEY_2:-}` unset) are left out, like a
 * field that is not written, but keep their place (null), so the other keys' indexes (their
 * labels) stay what they are; a pool left with none is no pool (the provider has no key).
 */
function withoutUnsetKeys(v: unknown): unknown {
  if (!Array.isArray(v)) return v;
  const unset = (k: unknown) => k === '' || k === null || (!!k && typeof k === 'object' && !Array.isArray(k) && ((k as { key?: unknown }).key === undefined || (k as { key?: unknown }).key === ''));
  return v.every(unset) ? undefined : v.map((k) => (unset(k) ? null : k));
}

export const ProviderConfig = z.strictObject({
  id,
  type: ProviderType,
  base_url: z.url({ protocol: /^https?$/ }).optional(),
  api_key: z.string().optional(),
  api_keys: z
    .preprocess(withoutUnsetKeys, z.array(z.union([z.string().min(1), PoolKeyConfig, z.null()])).min(1).optional())
    .describe('A key pool instead of api_key: requests are spread over the keys, each kept under its own limits, a key that gets 429/401/403 cools down.'),
  headers: z.record(z.string(), z.string()).optional(),
  voices: z
    .record(z.string(), z.string().regex(/^[A-Za-z0-9]{1,64}$/, { message: 'a voice id: letters and digits' }))
    .optional()
    .describe("ElevenLabs: voice names mapped to voice ids of this account, added to (or overriding) the premade voices' defaults."),
  // Time limits of one upstream attempt (README "Time limits"). Each one that runs out fails over
  // while nothing was sent to the client, or ends a started stream with one error event.
  timeout_ms: z
    .number()
    .int()
    .positive()
    .default(600_000)
    .describe('Total deadline of a non-streaming answer, from sending the request to its last byte (ms). Also caps the first-byte and idle limits when they are not set.'),
  connect_timeout_ms: z.number().int().positive().optional().describe('Time to open the connection (TCP and TLS), in ms; default 10000.'),
  first_byte_timeout_ms: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('Time until the response headers of a non-streaming answer, or the first complete event of a stream, in ms; default 300000 (or timeout_ms if smaller).'),
  idle_timeout_ms: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('Longest silence between two events of a stream (keep-alive comments count) or two chunks of a non-streaming body, in ms; default 120000 (or timeout_ms if smaller).'),
});
export type ProviderConfig = z.infer<typeof ProviderConfig>;

/** How a model's first upstream is chosen; failover to the next applies under each (server/routing/strategies.ts). */
export const ROUTING_STRATEGIES = ['failover', 'weighted', 'least-latency', 'least-busy'] as const;
export type RoutingStrategy = (typeof ROUTING_STRATEGIES)[number];

/** A price in US dollars: a decimal string (kept exact) or a number (written out as its decimal). */
const price = z
  .union([z.string().regex(/^\d+(\.\d+)?(e-?\d+)?$/i, { message: 'a price in US dollars: a non-negative decimal such as "0.0000025"' }), z.number().nonnegative().transform(String)])
  .nullable();
/** A spend budget in US dollars (the API's rule): a decimal string, or a number written out as one. */
const budget = z.union([UsdBudget, z.number().transform(String).pipe(UsdBudget)]);
/** Per-bucket quota weights (server/billing/buckets.ts): what one token of the bucket counts for. */
const weight = z.number().min(0).max(1000);

export const ModelConfig = z.strictObject({
  id: z.string().min(1),
  endpoint: ModelEndpoint,
  token_multiplier: z.number().positive().default(1),
  billing: z
    .strictObject({
      tokens_per_image: z.number().nonnegative().optional().describe('Images models: quota tokens per generated image (default 1000).'),
      tokens_per_video_second: z.number().nonnegative().optional().describe('Video models: quota tokens per second of video (default 10000).'),
      tokens_per_1k_characters: z.number().nonnegative().optional().describe('Speech models: quota tokens per 1,000 input characters (default 250).'),
      tokens_per_audio_minute: z.number().nonnegative().optional().describe('Transcription models: quota tokens per minute of audio (default 1000).'),
      weights: z
        .strictObject({
          input: weight.optional(),
          cache_read: weight.optional(),
          cache_write: weight.optional(),
          cache_write_1h: weight.optional(),
          audio_input: weight.optional(),
          image_input: weight.optional(),
          output: weight.optional(),
          reasoning: weight.optional(),
          audio_output: weight.optional(),
          image_output: weight.optional(),
        })
        .optional()
        .describe('What one token of each usage bucket counts for in the quota, before token_multiplier (default 1 each; cache_write_1h defaults to cache_write).'),
    })
    .optional()
    .describe("Non-token work counted against the daily quota, before token_multiplier; only the rule of the model's endpoint applies."),
  premium: z.boolean().default(false),
  required_plan: z.string().optional(),
  upstreams: z
    .array(
      z.strictObject({
        provider: z.string(),
        model: z.string().min(1),
        weight: z.number().min(0).max(1_000_000).default(1).describe("Share of the model's traffic under strategy weighted (relative to the other upstreams'); 0: only as a fallback."),
      }),
    )
    .min(1),
  strategy: z
    .enum(ROUTING_STRATEGIES, { message: `one of ${ROUTING_STRATEGIES.join(', ')}` })
    .default('failover')
    .describe('How the first upstream is chosen (docs/routing.md): failover (in order), weighted, least-latency, least-busy. Failover to the next choice applies under each.'),
  cache_affinity: z
    .boolean()
    .default(true)
    .describe("Keep requests that share a cacheable prompt prefix (or a session hint) on one upstream key while it is healthy and under its limits, so the provider's prompt cache stays warm."),
  metadata_id: z.string().optional(),
  description: z.string().nullable().optional(),
  context_window: z.number().int().positive().nullable().optional(),
  max_output_tokens: z.number().int().positive().nullable().optional(),
  supports_vision: z.boolean().nullable().optional(),
  supports_tools: z.boolean().nullable().optional(),
  supports_function_calling: z.boolean().nullable().optional(),
  supports_reasoning: z.boolean().nullable().optional(),
  supports_json_mode: z.boolean().nullable().optional(),
  supports_audio_input: z.boolean().nullable().optional(),
  supports_image_output: z.boolean().nullable().optional(),
  supports_streaming: z.boolean().nullable().optional(),
  input_modalities: z.array(z.string()).nullable().optional(),
  output_modalities: z.array(z.string()).nullable().optional(),
  modality: z.string().nullable().optional(),
  tokenizer: z.string().nullable().optional(),
  pricing: z
    .strictObject({
      prompt: price.optional(),
      completion: price.optional(),
      image: price.optional(),
      request: price.optional(),
      input_cache_read: price.optional(),
      input_cache_write: price.optional(),
      input_cache_write_1h: price.optional(),
      internal_reasoning: price.optional(),
      web_search: price.optional(),
      input_audio: price.optional(),
      input_image: price.optional(),
      output_audio: price.optional(),
      output_image: price.optional(),
      video_second: price.optional(),
      character: price.optional(),
      audio_minute: price.optional(),
    })
    .nullable()
    .optional(),
});
export type ModelConfig = z.infer<typeof ModelConfig>;

export const PlanConfig = z.strictObject({
  id,
  rank: z.number().int().min(0),
  daily_tokens: z.number().int().min(0),
  requests_per_minute: z.number().int().min(0),
  max_concurrent_jobs: z.number().int().min(0).default(2),
  // The limits above hold for each API key (and each OAuth grant) alone; these hold for a user over
  // all of them together, so replacing a key or adding one gives no fresh allowance. Unset: none.
  user_daily_tokens: z.number().int().min(0).optional(),
  user_requests_per_minute: z.number().int().min(0).optional(),
  user_max_concurrent_jobs: z.number().int().min(0).optional(),
  /** API keys a user may hold at once (revoked ones do not count). */
  max_keys: z.number().int().min(1).max(1000).default(50),
  // Spend budgets in US dollars (docs/billing.md "Budgets"): per key (and OAuth grant), and per
  // user over all of them; per UTC day and per UTC calendar month. Unset: none.
  daily_budget_usd: budget.optional(),
  monthly_budget_usd: budget.optional(),
  user_daily_budget_usd: budget.optional(),
  user_monthly_budget_usd: budget.optional(),
});
export type PlanConfig = z.infer<typeof PlanConfig>;

const searchCommon = {
  max_results: z.number().int().min(1).max(20).default(5),
  max_rounds: z.number().int().min(1).max(10).default(3),
  timeout_ms: z.number().int().positive().default(10_000),
};
export const WebSearchConfig = z.discriminatedUnion('backend', [
  z.strictObject({ backend: z.literal('searxng'), base_url: z.url({ protocol: /^https?$/ }), ...searchCommon }),
  z.strictObject({ backend: z.literal('brave'), api_key: z.string().min(1), base_url: z.url({ protocol: /^https?$/ }).default('https://api.search.brave.com/res/v1'), ...searchCommon }),
]);

const IdentityProvider = z.discriminatedUnion('type', [
  z.strictObject({ id: id.default('discord'), type: z.literal('discord'), name: z.string().default('Discord'), client_id: z.string().min(1), client_secret: z.string().min(1) }),
  z.strictObject({
    id,
    type: z.literal('oidc'),
    name: z.string().optional(),
    issuer: z.url(),
    client_id: z.string().min(1),
    client_secret: z.string().optional(),
    scopes: z.array(z.string()).default(['openid', 'email', 'profile']),
  }),
  z.strictObject({
    id,
    type: z.literal('oauth2'),
    name: z.string().optional(),
    authorization_endpoint: z.url(),
    token_endpoint: z.url(),
    userinfo_endpoint: z.url(),
    client_id: z.string().min(1),
    client_secret: z.string().optional(),
    scopes: z.array(z.string()).default([]),
  }),
]);
export type IdentityProviderConfig = z.infer<typeof IdentityProvider>;

const SignInThrottle = z.strictObject({
  window_minutes: z.number().positive().default(15).describe('Length of each counting window.'),
  failures_per_account: z.number().int().min(1).default(5).describe('Wrong passwords per account (email) per window.'),
  failures_per_address: z.number().int().min(1).default(20).describe('Wrong passwords per client address per window, over all accounts.'),
  signups_per_address: z.number().int().min(1).default(20).describe('Sign-up attempts per client address per window.'),
  resets_per_account: z.number().int().min(1).default(3).describe('Password-reset emails asked for one email (known or not) per window.'),
  resets_per_address: z.number().int().min(1).default(10).describe('Password-reset emails asked for from one client address per window, over all emails.'),
});

/** A domain of sign-up addresses: `example.com` (exactly that domain; a subdomain is listed on its own), lowercased. */
const SignupDomain = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/, { message: 'a domain name such as example.com (without @ or wildcards)' });

export const AuthConfig = z.strictObject({
  /** Email + password accounts (argon2id). */
  local: z
    .strictObject({
      enabled: z.boolean().default(true),
      allow_signup: z
        .boolean()
        .default(false)
        .describe(
          'Let anyone create an account (through the sign-up form or a sign-in provider). Off by default: the first account (the administrator) is made through /signup, then users are invited (users create + users reset-link).',
        ),
      signup_email_domains: z
        .array(SignupDomain)
        .default([])
        .describe(
          'Email domains whose addresses may create an account while allow_signup is false: through the form (a link to choose the password is mailed, so smtp is needed) or a sign-in provider (a verified email).',
        ),
      throttle: SignInThrottle.prefault({}),
      reset_link_minutes: z
        .number()
        .int()
        .min(5)
        .max(24 * 60)
        .default(60)
        .describe('How long a password-reset link mailed on request (/forgot-password) works; links made by an operator take their own (CLI --expires-in, default 1440).'),
    })
    .prefault({}),
  providers: z.array(IdentityProvider).default([]),
  session_ttl_hours: z.number().positive().default(168),
  max_apps_per_user: z.number().int().min(1).default(5),
});

// Fastify's trustProxy: believe X-Forwarded-For/-Host/-Proto from these peers only.
const ProxyAddress = z
  .string()
  .refine((a) => ['loopback', 'linklocal', 'uniquelocal'].includes(a) || ipaddr.isValid(a) || ipaddr.isValidCIDR(a), {
    message: 'expected an IP address, a CIDR range, or loopback / linklocal / uniquelocal',
  });
export const TrustProxy = z.union([z.boolean(), z.number().int().min(1), z.array(ProxyAddress).min(1)]);
export type TrustProxy = z.infer<typeof TrustProxy>;

const MetadataSource = (url: string) => z.strictObject({ enabled: z.boolean().default(true), url: z.url().default(url) }).default({ enabled: true, url });
export const CatalogMetadataConfig = z.strictObject({
  refresh_hours: z.number().positive().default(24),
  openrouter: MetadataSource('https://openrouter.ai/api/v1/models'),
  poe: MetadataSource('https://api.poe.com/v1/models'),
  snapshot: z.string().optional().describe('An OpenRouter model list (JSON) to start from before the first fetch succeeds.'),
});

export const JobsConfig = z.strictObject({
  retention_hours: z.number().positive().max(24 * 365).default(24).describe('After this long a job and its output are deleted (polling answers 404 job_not_found).'),
  max_run_minutes: z.number().positive().max(24 * 60).default(60).describe('A job still unfinished this long after submission fails; its quota reservation and job slot hold for as long.'),
  concurrency: z.number().int().min(1).max(256).default(4).describe('Jobs one instance runs at once (waiting on an upstream operation between checks does not count).'),
  sync_timeout_seconds: z
    .number()
    .positive()
    .max(3600)
    .default(100)
    .describe('A synchronous image request still running after this long answers 524 with the id of the job that carries on with it (billed once). Default 100 s, under common proxy time-outs.'),
  poll_seconds: z.number().positive().max(600).default(10).describe("Interval between checks of a long upstream operation (a video being generated)."),
});

/** How long the usage ledger keeps what (docs/decisions/0026-usage-aggregates-and-partitions.md). */
export const LedgerConfig = z.strictObject({
  retention_days: z
    .number()
    .int()
    .min(1)
    .max(3650)
    .default(90)
    .describe("Raw ledger rows (one per request) are kept this many UTC days, then dropped a day's partition at a time. Usage reports read the daily aggregates, which outlive them."),
  aggregate_retention_days: z
    .number()
    .int()
    .min(1)
    .max(36500)
    .default(730)
    .describe('The daily aggregates per key and model that every usage report reads are kept this many UTC days (default 2 years).'),
});

/** The request log (server/requests/, docs/decisions/0030-request-log.md): how long it keeps what, and whether it keeps bodies. */
export const RequestLogConfig = z.strictObject({
  enabled: z.boolean().default(true).describe('false: no request is recorded (GET /v1/requests answers an empty list).'),
  retention_days: z.number().int().min(1).max(3650).default(30).describe('Records are deleted after this many days.'),
  capture_bodies: z
    .boolean()
    .default(false)
    .describe("Keep every request's and response's body (secrets and media payloads elided, size-capped) in the blob store. Off by default; an operator can also switch it on for one key (PATCH /admin/v1/keys/{id} with capture_bodies)."),
  body_retention_days: z.number().int().min(1).max(365).default(7).describe('Captured bodies are deleted after this many days (at most retention_days).'),
  max_body_bytes: z
    .number()
    .int()
    .min(1024)
    .max(16 * 1024 * 1024)
    .default(256 * 1024)
    .describe('Each captured body is cut after this many bytes (the record says so).'),
});

/** Spend budgets' thresholds, recorded once per period and posted to a webhook (server/billing/budget-alerts.ts). */
export const BudgetAlertsConfig = z
  .strictObject({
    webhook_url: z
      .url({ protocol: /^https?$/ })
      .optional()
      .describe('Where each alert is POSTed (JSON, signed). Unset: alerts are only recorded and shown (usage reports, dashboard).'),
    secret: z
      .string()
      .min(16, { message: 'at least 16 characters (e.g. the output of openssl rand -hex 32)' })
      .optional()
      .describe('Signs every delivery (X-Gateway-Signature: HMAC-SHA256); required with webhook_url.'),
    thresholds: z
      .array(z.number().int().min(1).max(1000))
      .refine((ts) => new Set(ts).size === ts.length, { message: 'each threshold once' })
      .transform((ts) => [...ts].sort((a, b) => a - b))
      .default([50, 80, 100])
      .describe('Percentages of a budget (1–1000) whose crossing makes an alert, once per budget and period each.'),
    max_attempts: z.number().int().min(1).max(100).default(10).describe('Deliveries tried per alert (backoff 1 s, 2 s, 4 s … up to 5 min) before it is marked failed.'),
  })
  .superRefine((v, ctx) => {
    if (v.webhook_url && !v.secret) ctx.addIssue({ code: 'custom', path: ['secret'], message: 'required when webhook_url is set: every delivery is signed with it' });
  });

/** Health-aware choice of upstreams and keys (server/routing/, docs/routing.md). */
export const RoutingConfig = z.strictObject({
  circuit_breaker: z
    .strictObject({
      enabled: z.boolean().default(true),
      consecutive_failures: z.number().int().min(1).max(1000).default(5).describe("Failures in a row (the upstream's: unreachable, timed out, 5xx) that open an upstream's breaker."),
      error_rate: z.number().gt(0).max(1).default(0.5).describe('Share of failed attempts over window_seconds that opens it, once min_requests were made in the window.'),
      min_requests: z.number().int().min(1).default(20),
      window_seconds: z.number().int().min(5).max(3600).default(60),
      cooldown_seconds: z.number().positive().max(3600).default(30).describe('How long an open breaker skips its upstream before one probe request is let through (half-open).'),
      max_cooldown_seconds: z.number().positive().max(86_400).default(300).describe('A failed probe doubles the cool-down, up to this.'),
    })
    .prefault({}),
  key_cooldown: z
    .strictObject({
      rate_limited_seconds: z.number().positive().max(3600).default(1).describe("A key answered 429 without Retry-After rests this long, doubled on each 429 in a row (up to max_seconds)."),
      auth_failed_seconds: z.number().positive().max(86_400).default(60).describe('A key answered 401, 402 (out of credits) or 403 rests this long, doubled on each repeat (up to max_seconds).'),
      max_seconds: z.number().positive().max(86_400).default(600),
    })
    .prefault({}),
  least_latency: z
    .strictObject({
      exploration: z.number().min(0).max(1).default(0.05).describe('Share of requests sent to another upstream than the fastest, so a recovered or slowed one is measured again.'),
      smoothing: z.number().gt(0).max(1).default(0.2).describe("Weight of the newest time to first byte in the moving average."),
    })
    .prefault({}),
  affinity_min_tokens: z
    .number()
    .int()
    .min(0)
    .default(1024)
    .describe('Prompt prefixes shorter than this (estimated tokens of system prompt, tools and first message) are not cached by providers and get no affinity; a session hint always does.'),
  sync_ms: z.number().int().min(100).max(60_000).default(1000).describe('How often an instance reads the breaker and cool-down states others shared through Redis.'),
});
export type RoutingConfig = z.infer<typeof RoutingConfig>;

/** The mail server that sends password-reset links; without it, only an operator can make one. */
export const SmtpConfig = z.strictObject({
  host: z.string().min(1).describe('SMTP server host name.'),
  port: z.number().int().min(1).max(65_535).default(587).describe('587 (STARTTLS) by default; 465 with secure: true.'),
  secure: z.boolean().default(false).describe('true: TLS from the first byte (port 465); false: STARTTLS when the server offers it.'),
  user: z.string().optional().describe('User name, when the server wants authentication.'),
  password: z.string().optional().describe('Password for user; write ${SMTP_PASSWORD} rather than the password itself.'),
  from: z.string().min(3).describe('The sender of the mails, e.g. "Model Gateway <gateway@example.com>".'),
});
export type SmtpConfig = z.infer<typeof SmtpConfig>;

/** The shape of the config file; `referenceIssues` (and the providers' `vendorIssues`) check between its parts. */
export const GatewayConfigShape = z.strictObject({
  providers: z.array(ProviderConfig).default([]),
  models: z.array(ModelConfig).default([]),
  plans: z.array(PlanConfig).min(1).optional(),
  default_plan: z.string().optional().describe('Plan of new users; default: the lowest-ranked plan.'),
  key_cache_ttl_ms: z.number().int().min(0).max(60_000).default(5_000),
  allow_private_image_urls: z
    .boolean()
    .default(false)
    .describe('Let image URLs point at private, loopback or link-local addresses (SSRF protection off).'),
  client_disconnect_drain_ms: z.number().int().min(0).max(600_000).default(30_000),
  reservation_ttl_ms: z
    .number()
    .int()
    .min(1_000)
    .default(900_000)
    .describe('How long a quota reservation counts if its request never settles (its gateway crashed).'),
  web_search_surcharge_tokens: z.number().int().min(0).default(1_000),
  budget_unpriced_models: z
    .enum(['refuse', 'allow'])
    .default('refuse')
    .describe("Under a spend budget, a request to a model whose price is unknown: 'refuse' it (403 model_price_unknown), or 'allow' it, counted at no cost."),
  jobs: JobsConfig.prefault({}).describe('Async jobs (images/video, speech, transcription): how long they and their outputs are kept, and how they run.'),
  ledger: LedgerConfig.prefault({}).describe('How long the usage ledger keeps its raw rows and its daily aggregates.'),
  request_log: RequestLogConfig.prefault({}).describe('The request log behind GET /v1/requests: retention, and body capture (off by default).'),
  routing: RoutingConfig.prefault({}).describe('Circuit breakers, key cool-downs, least-latency and cache affinity settings shared by every model.'),
  budget_alerts: BudgetAlertsConfig.prefault({}).describe("Alerts when spend crosses a share of a plan's budget: recorded once per threshold and period, posted to a webhook when one is set."),
  auth: AuthConfig.prefault({}),
  catalog_metadata: CatalogMetadataConfig.default({
    refresh_hours: 24,
    openrouter: { enabled: true, url: 'https://openrouter.ai/api/v1/models' },
    poe: { enabled: true, url: 'https://api.poe.com/v1/models' },
  }),
  public_url: z
    .url({ protocol: /^https?$/ })
    .optional()
    .describe('The address users and apps reach the gateway at (OAuth issuer, redirect URIs of sign-in providers); default: taken from each request.'),
  smtp: SmtpConfig.optional().describe('A mail server for password-reset links asked for at /forgot-password; without it the page says to ask an operator.'),
  web_search: WebSearchConfig.optional().describe('The backend the gateway searches with for models whose provider has no native web search.'),
  trust_proxy: TrustProxy.default(false).describe(
    'Which peers may set X-Forwarded-For/-Host/-Proto: false (none), true (any: only behind a proxy that overwrites them), a hop count, or addresses/CIDRs. TRUST_PROXY overrides it.',
  ),
});

export const list = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.map((x) => (x && typeof x === 'object' ? (x as Record<string, unknown>) : {})) : []);
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * Duplicate ids and references to unknown providers and plans. Reads the input defensively, so the
 * loader reports them together with shape errors elsewhere in the file (zod skips refinements of
 * an object that has issues).
 */
export function referenceIssues(input: unknown): { path: (string | number)[]; message: string }[] {
  const cfg = input && typeof input === 'object' ? (input as Record<string, unknown>) : {};
  const issues: { path: (string | number)[]; message: string }[] = [];
  const dup = (key: 'providers' | 'models' | 'plans') => {
    const seen = new Set<string>();
    list(cfg[key]).forEach((item, i) => {
      const itemId = str(item.id);
      if (itemId === undefined) return;
      if (seen.has(itemId)) issues.push({ path: [key, i, 'id'], message: `duplicate ${key.slice(0, -1)} id "${itemId}"` });
      seen.add(itemId);
    });
  };
  dup('providers');
  dup('models');
  dup('plans');
  list(cfg.providers).forEach((p, i) => issues.push(...keyPoolIssues(p, ['providers', i])));
  const providers = new Set(list(cfg.providers).flatMap((p) => str(p.id) ?? []));
  const plans = new Set(Array.isArray(cfg.plans) ? list(cfg.plans).flatMap((p) => str(p.id) ?? []) : defaultPlans.map((p) => p.id));
  list(cfg.models).forEach((m, i) => {
    list(m.upstreams).forEach((u, j) => {
      const provider = str(u.provider);
      if (provider !== undefined && !providers.has(provider)) {
        issues.push({ path: ['models', i, 'upstreams', j, 'provider'], message: `unknown provider "${provider}" (known: ${[...providers].join(', ') || 'none'})` });
      }
    });
    if (m.strategy === 'weighted') {
      const weights = list(m.upstreams).map((u) => (typeof u.weight === 'number' ? u.weight : 1));
      if (weights.length && weights.every((w) => w === 0)) issues.push({ path: ['models', i, 'strategy'], message: 'strategy weighted needs an upstream whose weight is above 0 (every weight is 0)' });
    }
    const endpoint = str(m.endpoint);
    const billing = m.billing && typeof m.billing === 'object' ? (m.billing as Record<string, unknown>) : {};
    if (endpoint !== undefined && endpoint in ENDPOINT_UNITS) {
      for (const rule of Object.keys(billing)) {
        const unit = RULES[rule as RuleName];
        if (unit && unit !== ENDPOINT_UNITS[endpoint as keyof typeof ENDPOINT_UNITS]) {
          issues.push({ path: ['models', i, 'billing', rule], message: `${rule} applies to ${endpointsOfUnit(unit)} models; this model's endpoint is ${endpoint}` });
        }
      }
    }
    const plan = str(m.required_plan);
    if (plan !== undefined && !plans.has(plan)) issues.push({ path: ['models', i, 'required_plan'], message: `unknown plan "${plan}" (known: ${[...plans].join(', ')})` });
  });
  const defaultPlan = str(cfg.default_plan);
  if (defaultPlan !== undefined && !plans.has(defaultPlan)) issues.push({ path: ['default_plan'], message: `unknown plan "${defaultPlan}" (known: ${[...plans].join(', ')})` });
  return issues;
}
export type GatewayConfigInput = z.input<typeof GatewayConfigShape>;

/** A key pool's mistakes: beside api_key, the same credential twice, an alias twice. Never quotes a key. */
function keyPoolIssues(p: Record<string, unknown>, at: (string | number)[]): { path: (string | number)[]; message: string }[] {
  if (!Array.isArray(p.api_keys)) return [];
  const issues: { path: (string | number)[]; message: string }[] = [];
  if (str(p.api_key) !== undefined) issues.push({ path: [...at, 'api_keys'], message: 'set api_key or api_keys, not both (a single key is a pool of one)' });
  const keys = new Map<string, number>();
  const aliases = new Map<string, number>();
  p.api_keys.forEach((k: unknown, j: number) => {
    const entry = typeof k === 'string' ? { key: k } : k && typeof k === 'object' ? (k as Record<string, unknown>) : {};
    const key = str(entry.key);
    if (key !== undefined && key !== '') {
      const first = keys.get(key);
      if (first !== undefined) issues.push({ path: [...at, 'api_keys', j], message: `the same key as api_keys[${first}]: each key of a pool once` });
      else keys.set(key, j);
    }
    const alias = str(entry.alias);
    if (alias !== undefined) {
      const first = aliases.get(alias);
      if (first !== undefined) issues.push({ path: [...at, 'api_keys', j, 'alias'], message: `alias "${alias}" is already api_keys[${first}]'s` });
      else aliases.set(alias, j);
    }
  });
  return issues;
}

export const defaultPlans: PlanConfig[] = [
  // A user's allowance is the plan's, whatever the number of keys: per key as much as per user.
  { id: 'free', rank: 0, daily_tokens: 200_000, requests_per_minute: 20, max_concurrent_jobs: 2, user_daily_tokens: 200_000, user_requests_per_minute: 40, user_max_concurrent_jobs: 4, max_keys: 10 },
  { id: 'pro', rank: 1, daily_tokens: 5_000_000, requests_per_minute: 300, max_concurrent_jobs: 10, user_daily_tokens: 10_000_000, user_requests_per_minute: 600, user_max_concurrent_jobs: 20, max_keys: 50 },
];

/** The configuration after validation and defaults: what the rest of the server reads. */
export type ResolvedConfig = {
  providers: ProviderConfig[];
  models: (ModelConfig & { required_plan: string })[];
  plans: PlanConfig[];
  defaultPlan: string;
  keyCacheTtlMs: number;
  allowPrivateImageUrls: boolean;
  /** How long an upstream stream is still read for usage after the client went away. */
  drainMs: number;
  reservationTtlMs: number;
  webSearchSurchargeTokens: number;
  budgetUnpricedModels: 'refuse' | 'allow';
  jobs: z.infer<typeof JobsConfig>;
  ledger: z.infer<typeof LedgerConfig>;
  requestLog: z.infer<typeof RequestLogConfig>;
  budgetAlerts: z.infer<typeof BudgetAlertsConfig>;
  routing: RoutingConfig;
  webSearch?: z.infer<typeof WebSearchConfig>;
  auth: z.infer<typeof AuthConfig>;
  catalogMetadata: z.infer<typeof CatalogMetadataConfig>;
  publicUrl?: string;
  /** Mails password-reset links when set. */
  smtp?: SmtpConfig;
  /** Fastify's trustProxy: whose forwarded headers are believed (client address, protocol, host). */
  trustProxy: TrustProxy;
  /** Where it came from, for start-up messages. */
  source: string;
  /** What loading noticed that does not stop the gateway (`configWarnings` adds the rest). */
  loadWarnings: string[];
};
