// Capability metadata for catalog models from OpenRouter's public model list and Poe's, cached in
// the database (a restart or an offline machine serves the last known), optionally seeded from a
// snapshot file. Matching is explicit (`metadata_id`) or by a documented, deterministic
// normalisation — never a fuzzy guess that could attach the wrong context window.
import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { ModelPricing, type CatalogEntry } from '../../contract/models.ts';
import type { PrismaClient } from '../db/client.ts';
import type { Prisma } from '../db/generated/client.ts';
import type { ProviderConfig, ResolvedConfig } from '../config/schema.ts';
import { upstreamAgent } from '../upstream/http.ts';
import { vendorOf } from '../providers/registry.ts';
import type { JsonObject, JsonValue } from '../upstream/json.ts';

/** A model list entry as OpenRouter or Poe sent it: every field is checked where it is read. */
type Entry = JsonObject & { id: string };
export type Source = 'openrouter' | 'poe';
/** The catalog fields metadata can supply. */
export type Resolved = Partial<Omit<CatalogEntry, 'id' | 'object' | 'created' | 'owned_by' | 'endpoint' | 'token_multiplier' | 'premium' | 'required_plan' | 'metadata_source' | 'metadata_status'>>;

const posInt = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : null);
const strOrNull = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
/** Prices are decimal strings per token; OpenRouter's "-1" means "varies" — unknown. */
type Prices = NonNullable<CatalogEntry['pricing']>;
/** Every price field, unknown. */
export const UNKNOWN_PRICES = Object.fromEntries(Object.keys(ModelPricing.shape).map((f) => [f, null])) as { [F in keyof Prices]: null };

const price = (v: unknown) => (typeof v === 'string' && /^\d+(\.\d+)?(e-?\d+)?$/i.test(v) ? v : typeof v === 'number' && v >= 0 ? String(v) : null);
const list = (v: unknown) => (Array.isArray(v) ? v.map(String) : null);
/** `v[key]` when v is a JSON object, else undefined (as reading a field of anything else gives). */
const at = (v: JsonValue | undefined, key: string): JsonValue | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? v[key] : undefined);
const isEntry = (v: JsonValue): v is Entry => v !== null && typeof v === 'object' && !Array.isArray(v) && typeof v.id === 'string';

function modalities(arch: JsonValue | undefined): Resolved {
  const input = list(at(arch, 'input_modalities'));
  const output = list(at(arch, 'output_modalities'));
  return {
    modality: strOrNull(at(arch, 'modality')),
    input_modalities: input,
    output_modalities: output,
    tokenizer: strOrNull(at(arch, 'tokenizer')),
    supports_vision: input ? input.includes('image') : null,
    supports_audio_input: input ? input.includes('audio') : null,
    supports_image_output: output ? output.includes('image') : null,
  };
}

/**
 * OpenRouter's prices. `internal_reasoning` and `web_search` of "0" mean "not charged apart"
 * (reasoning is billed as output there; 0 is what it lists for models whose provider charges for
 * searches), so they are left unknown rather than taken as free.
 */
function pricing(p: JsonValue | undefined): Resolved['pricing'] {
  if (!p || typeof p !== 'object') return null;
  const nonZero = (v: string | null) => (v !== null && Number(v) > 0 ? v : null);
  return {
    ...UNKNOWN_PRICES,
    prompt: price(at(p, 'prompt')),
    completion: price(at(p, 'completion')),
    image: price(at(p, 'image')),
    request: price(at(p, 'request')),
    input_cache_read: price(at(p, 'input_cache_read')),
    input_cache_write: price(at(p, 'input_cache_write')),
    internal_reasoning: nonZero(price(at(p, 'internal_reasoning'))),
    web_search: nonZero(price(at(p, 'web_search'))),
  };
}

/** OpenRouter `GET /api/v1/models` entry → catalog fields (the fields of its models API reference; test/fixtures/recorded/roo-code holds a recorded list). */
export function mapOpenRouter(m: JsonObject): Resolved {
  const sp = list(m.supported_parameters);
  const has = (...names: string[]) => (sp ? names.some((n) => sp.includes(n)) : null);
  const tools = has('tools', 'tool_choice');
  return {
    // The model's own context length, not top_provider's (which is one provider's limit).
    context_window: posInt(m.context_length),
    max_output_tokens: posInt(at(m.top_provider, 'max_completion_tokens')),
    ...modalities(m.architecture),
    supports_tools: tools,
    supports_function_calling: tools,
    supports_reasoning: has('reasoning', 'include_reasoning'),
    supports_json_mode: has('response_format', 'structured_outputs'),
    description: strOrNull(m.description),
    pricing: pricing(m.pricing),
  };
}

/** Poe `GET /v1/models` entry (OpenAI-style list; `created` in milliseconds) → catalog fields. */
export function mapPoe(m: JsonObject): Resolved {
  return {
    context_window: posInt(at(m.context_window, 'context_length') ?? m.context_length),
    max_output_tokens: posInt(at(m.context_window, 'max_output_tokens') ?? m.max_output_tokens),
    ...modalities(m.architecture),
    description: strOrNull(m.description),
    pricing: pricing(m.pricing),
  };
}

/**
 * The ids a model is looked up under, in order: `metadata_id` alone when set; else the gateway id,
 * then `<vendor>/<upstream model>` for each upstream (the upstream id alone for OpenAI-compatible
 * ones, whose ids are OpenRouter's), each also with a date suffix removed and `N-M` version
 * numbers written `N.M` (claude-3-7-sonnet-20250219 → claude-3.7-sonnet). Lower-cased, exact.
 */
export function candidateIds(model: ResolvedConfig['models'][number], providers: Map<string, ProviderConfig>): string[] {
  if (model.metadata_id) return [model.metadata_id.toLowerCase()];
  const raw = [model.id];
  for (const u of model.upstreams) {
    const type = providers.get(u.provider)?.type;
    const vendor = type ? vendorOf(type)?.catalogVendor : undefined;
    raw.push(vendor && !u.model.includes('/') ? `${vendor}/${u.model}` : u.model);
  }
  const out: string[] = [];
  for (const id of raw) {
    const lower = id.toLowerCase();
    const undated = lower.replace(/-(\d{8}|\d{4}-\d{2}-\d{2})$/, '');
    for (const v of [lower, undated, undated.replace(/(\d)-(\d)(?=$|[-:])/g, '$1.$2')]) if (!out.includes(v)) out.push(v);
  }
  return out;
}

type Index = Map<string, Entry>;

/** A `data` column: an entry save() stored (a JSON object with a string id). */
const storedEntry = (column: Prisma.JsonValue) => column as Entry;

export class MetadataStore {
  private readonly index: Record<Source, Index> = { openrouter: new Map(), poe: new Map() };

  constructor(private readonly prisma: PrismaClient) {}

  private put(source: Source, entries: JsonValue[]) {
    const idx = new Map<string, Entry>();
    for (const e of entries) if (isEntry(e)) idx.set(e.id.toLowerCase(), e);
    this.index[source] = idx;
  }

  /** The last known lists from the database. */
  async load(): Promise<number> {
    const rows = await this.prisma.catalogMetadata.findMany();
    for (const source of ['openrouter', 'poe'] as const) this.put(source, rows.filter((r) => r.source === source).map((r) => storedEntry(r.data)));
    return rows.length;
  }

  /** Replaces a source's list, in memory and in the database. */
  async save(source: Source, entries: JsonValue[], fetchedAt = new Date()): Promise<void> {
    const valid = entries.filter(isEntry);
    await this.prisma.$transaction([
      this.prisma.catalogMetadata.deleteMany({ where: { source } }),
      this.prisma.catalogMetadata.createMany({ data: valid.map((e) => ({ source, externalId: e.id, data: e, fetchedAt })), skipDuplicates: true }),
    ]);
    this.put(source, valid);
  }

  size(source: Source): number {
    return this.index[source].size;
  }

  resolve(model: ResolvedConfig['models'][number], providers: Map<string, ProviderConfig>): { source: Source; fields: Resolved } | null {
    const ids = candidateIds(model, providers);
    for (const source of ['openrouter', 'poe'] as const) {
      for (const id of ids) {
        const hit = this.index[source].get(id);
        if (hit) return { source, fields: source === 'openrouter' ? mapOpenRouter(hit) : mapPoe(hit) };
      }
    }
    return null;
  }
}

export async function fetchModelList(url: string, timeoutMs = 15_000): Promise<JsonValue[]> {
  const res = await request(url, { dispatcher: upstreamAgent, headers: { accept: 'application/json' }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  if (res.statusCode !== 200) {
    await res.body.dump();
    throw new Error(`${url} answered ${res.statusCode}`);
  }
  // Parsed JSON is a JsonValue; undici types it `unknown`.
  const body = (await res.body.json()) as JsonValue;
  const data = Array.isArray(body) ? body : at(body, 'data');
  if (!Array.isArray(data)) throw new Error(`${url} did not return a model list`);
  return data;
}

export function readSnapshot(path: string): JsonValue[] {
  const body: JsonValue = JSON.parse(readFileSync(path, 'utf8'));
  const data = Array.isArray(body) ? body : at(body, 'data');
  if (!Array.isArray(data)) throw new Error(`${path} holds no model list`);
  return data;
}
