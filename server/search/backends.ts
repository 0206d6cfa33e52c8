// Web search backends the gateway runs itself for models whose provider has no native search.
import { request } from 'undici';
import { upstreamAgent } from '../upstream/http.ts';
import { asWire } from '../upstream/json.ts';

export type SearchResult = { title: string; url: string; snippet: string };

export interface SearchBackend {
  readonly name: string;
  search(query: string, maxResults: number): Promise<SearchResult[]>;
}

export type SearchConfig =
  | { backend: 'searxng'; base_url: string; max_results: number; max_rounds: number; timeout_ms: number }
  | { backend: 'brave'; api_key: string; base_url: string; max_results: number; max_rounds: number; timeout_ms: number };

export class SearchError extends Error {}

/** The answers' fields read (each may be missing: every one is read defensively). */
type SearxngAnswer = { results?: { title?: string; url?: string; content?: string }[] };
type BraveAnswer = { web?: { results?: { title?: string; url?: string; description?: string }[] } };

async function getJson(url: string, headers: Record<string, string>, timeoutMs: number): Promise<unknown> {
  const res = await request(url, { dispatcher: upstreamAgent, headers: { accept: 'application/json', ...headers }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  if (res.statusCode !== 200) {
    await res.body.dump();
    throw new SearchError(`search backend answered ${res.statusCode}`);
  }
  return res.body.json();
}

/** SearXNG's JSON API (`/search?format=json`; the instance must enable the json format). */
export class SearxngBackend implements SearchBackend {
  readonly name = 'searxng';
  constructor(private readonly cfg: Extract<SearchConfig, { backend: 'searxng' }>) {}
  async search(query: string, maxResults: number): Promise<SearchResult[]> {
    const url = `${this.cfg.base_url.replace(/\/+$/, '')}/search?${new URLSearchParams({ q: query, format: 'json' })}`;
    const body = asWire<SearxngAnswer>(await getJson(url, {}, this.cfg.timeout_ms));
    return (body.results ?? []).slice(0, maxResults).map((r) => ({ title: String(r.title ?? r.url), url: String(r.url), snippet: String(r.content ?? '') }));
  }
}

/** Brave Search API (keyed). */
export class BraveBackend implements SearchBackend {
  readonly name = 'brave';
  constructor(private readonly cfg: Extract<SearchConfig, { backend: 'brave' }>) {}
  async search(query: string, maxResults: number): Promise<SearchResult[]> {
    const url = `${this.cfg.base_url.replace(/\/+$/, '')}/web/search?${new URLSearchParams({ q: query, count: String(maxResults) })}`;
    const body = asWire<BraveAnswer>(await getJson(url, { 'x-subscription-token': this.cfg.api_key }, this.cfg.timeout_ms));
    return (body.web?.results ?? []).slice(0, maxResults).map((r) => ({ title: String(r.title ?? r.url), url: String(r.url), snippet: String(r.description ?? '') }));
  }
}

export function openSearchBackend(cfg: SearchConfig | undefined): SearchBackend | null {
  if (!cfg) return null;
  return cfg.backend === 'searxng' ? new SearxngBackend(cfg) : new BraveBackend(cfg);
}
