// Fake OpenAI-compatible upstreams for the routing simulation (bench/routing-sim.ts): plain
// node:http servers answering POST /v1/chat/completions with a non-streaming chat completion in
// OpenAI's shape (usage included), each with a latency (base + jitter), a share of 503s, a time it
// dies at (every request after it: 503, or connection refused), per-key request limits (429 with
// Retry-After past `requests_per_minute` in any 60 s, counted per bearer key) and a prompt cache
// per key (per account): the prefix (system + first user message) of a request is cached for
// `cacheTtlMs`, and a request whose prefix is cached reports it as `cached_tokens`.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type UpstreamSpec = {
  name: string;
  /** Time to answer: base + a uniform share of jitter (ms). */
  latencyMs: number;
  jitterMs?: number;
  /** Share of requests answered 503 (after the latency). */
  failureRate?: number;
  /** Dies this long after `reset()` (ms): then every request gets a 503 at once, or a refused connection. */
  diesAtMs?: number;
  deathMode?: '503' | 'refuse';
  /** Requests per minute each API key may make (a sliding 60 s window, answered requests only). */
  requestsPerMinute?: number;
  /** How long a cached prefix stays (ms; refreshed by each hit). */
  cacheTtlMs?: number;
  seed?: number;
};

export type UpstreamStats = {
  /** Requests that reached the server. */
  requests: number;
  ok: number;
  failed503: number;
  rateLimited429: number;
  /** Requests that arrived after it died (503 mode; a refused connection is counted by nobody). */
  afterDeath: number;
  /** Requests per bearer key. */
  byKey: Record<string, number>;
  promptTokens: number;
  cachedTokens: number;
};

/** A seeded PRNG (mulberry32): the same seed, the same sequence. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Estimated tokens of a text, as the gateway estimates them: characters / 4. */
export const tokensOf = (chars: number) => Math.ceil(chars / 4);

type Message = { role: string; content: unknown };
const text = (c: unknown): string => (typeof c === 'string' ? c : Array.isArray(c) ? c.map((p) => (p as { text?: string }).text ?? '').join('') : '');

const emptyStats = (): UpstreamStats => ({ requests: 0, ok: 0, failed503: 0, rateLimited429: 0, afterDeath: 0, byKey: {}, promptTokens: 0, cachedTokens: 0 });

export class FakeUpstream {
  readonly spec: UpstreamSpec;
  stats: UpstreamStats = emptyStats();
  private server: Server;
  private port = 0;
  private readonly sockets = new Set<Socket>();
  private random: () => number;
  private dead = false;
  private deathTimer: NodeJS.Timeout | null = null;
  /** Per key: timestamps of the answered requests of the last 60 s. */
  private windows = new Map<string, number[]>();
  /** Per key: prefix hash → when it expires. */
  private caches = new Map<string, Map<string, number>>();
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(spec: UpstreamSpec) {
    this.spec = spec;
    this.random = prng(spec.seed ?? 1);
    this.server = this.makeServer();
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  private makeServer(): Server {
    const server = createServer((req, res) => void this.handle(req, res));
    server.keepAliveTimeout = 30_000;
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
    return server;
  }

  private listen(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        this.server.off('error', reject);
        this.port = (this.server.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  async start(): Promise<this> {
    await this.listen(0);
    this.reset();
    return this;
  }

  /** A fresh run: counters, rate windows and caches emptied, the PRNG reseeded, the clock of its death restarted. */
  async resetAsync(): Promise<void> {
    if (!this.server.listening) {
      this.server = this.makeServer();
      await this.listen(this.port);
    }
    this.reset();
  }

  private reset(): void {
    this.stats = emptyStats();
    this.windows.clear();
    this.caches.clear();
    this.random = prng(this.spec.seed ?? 1);
    this.dead = false;
    if (this.deathTimer) clearTimeout(this.deathTimer);
    this.deathTimer = null;
    if (this.spec.diesAtMs !== undefined) {
      this.deathTimer = setTimeout(() => this.die(), this.spec.diesAtMs);
      this.deathTimer.unref();
    }
  }

  private die(): void {
    this.dead = true;
    if (this.spec.deathMode === 'refuse') {
      this.server.close();
      for (const s of this.sockets) s.destroy();
    }
  }

  private later(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.timers.delete(t);
        resolve();
      }, ms);
      this.timers.add(t);
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const st = this.stats;
    st.requests++;
    const key = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? '(none)';
    st.byKey[key] = (st.byKey[key] ?? 0) + 1;
    if (req.method !== 'POST' || !req.url?.startsWith('/v1/chat/completions')) return this.error(res, 404, 'not_found', 'Unknown path.');
    if (this.dead) {
      st.afterDeath++;
      st.failed503++;
      return this.error(res, 503, 'server_error', 'The upstream is down.');
    }
    // The key's requests of the last minute: one more is refused with the time until the oldest leaves.
    const limit = this.spec.requestsPerMinute;
    if (limit) {
      const now = Date.now();
      const w = (this.windows.get(key) ?? []).filter((t) => t > now - 60_000);
      this.windows.set(key, w);
      if (w.length >= limit) {
        st.rateLimited429++;
        const retryAfter = Math.max(1, Math.ceil((w[0]! + 60_000 - now) / 1000));
        return this.error(res, 429, 'requests', `Rate limit reached for requests: limit ${limit} per minute.`, { 'retry-after': String(retryAfter) });
      }
      w.push(now);
    }
    let body: { model?: string; messages?: Message[] };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return this.error(res, 400, 'invalid_request_error', 'Invalid JSON.');
    }
    const messages = body.messages ?? [];
    const delay = this.spec.latencyMs + (this.spec.jitterMs ?? 0) * this.random();
    const fails = this.random() < (this.spec.failureRate ?? 0);
    await this.later(delay);
    if (fails) {
      st.failed503++;
      return this.error(res, 503, 'server_error', 'The upstream is overloaded.');
    }
    // Prompt tokens ≈ characters / 4; the cacheable prefix is the system prompt and the first user message.
    const promptChars = messages.reduce((n, m) => n + text(m.content).length, 0);
    const firstUser = messages.find((m) => m.role === 'user');
    const system = messages.filter((m) => m.role === 'system' || m.role === 'developer');
    const prefixText = system.map((m) => text(m.content)).join('\n') + '\u0000' + text(firstUser?.content);
    const prefixTokens = tokensOf(prefixText.length - 1);
    const hash = createHash('sha256').update(prefixText).digest('base64url');
    const cache = this.caches.get(key) ?? new Map<string, number>();
    this.caches.set(key, cache);
    const now = Date.now();
    const hit = (cache.get(hash) ?? 0) > now;
    cache.set(hash, now + (this.spec.cacheTtlMs ?? 300_000));
    const promptTokens = tokensOf(promptChars);
    const cachedTokens = hit ? Math.min(prefixTokens, promptTokens) : 0;
    const content = `Turn ${messages.filter((m) => m.role === 'user').length} answered by ${this.spec.name}.`;
    const completionTokens = tokensOf(content.length);
    st.ok++;
    st.promptTokens += promptTokens;
    st.cachedTokens += cachedTokens;
    const answer = {
      id: `chatcmpl-${this.spec.name}-${st.requests}`,
      object: 'chat.completion',
      created: Math.floor(now / 1000),
      model: body.model ?? 'fake',
      choices: [{ index: 0, message: { role: 'assistant', content, refusal: null, annotations: [] }, logprobs: null, finish_reason: 'stop' }],
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens,
        prompt_tokens_details: { cached_tokens: cachedTokens, audio_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
      },
      service_tier: 'default',
      system_fingerprint: 'fp_routing_sim',
    };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer));
  }

  private error(res: ServerResponse, status: number, type: string, message: string, headers: Record<string, string> = {}): void {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify({ error: { message, type, param: null, code: status === 429 ? 'rate_limit_exceeded' : null } }));
  }

  async close(): Promise<void> {
    if (this.deathTimer) clearTimeout(this.deathTimer);
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    const closed = this.server.listening ? new Promise<void>((r) => this.server.close(() => r())) : Promise.resolve();
    for (const s of this.sockets) s.destroy();
    await closed;
  }
}

/** Starts every upstream of `specs` on a free loopback port. */
export async function startUpstreams(specs: UpstreamSpec[]): Promise<FakeUpstream[]> {
  return Promise.all(specs.map((s) => new FakeUpstream(s).start()));
}
