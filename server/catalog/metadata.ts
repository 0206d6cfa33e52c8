// Capability metadata for catalog models from public model lists (the registry's
// CATALOG_SOURCES, each read by its vendor's folder), cached in the database (a restart or an
// offline machine serves the last known), optionally seeded from a snapshot file. Matching is
// explicit (`metadata_id`) or by a documented, deterministic normalisation — never a fuzzy guess
// that could attach the wrong context window.
import { readFileSync } from 'node:fs';
import { request } from 'undici';
import type { PrismaClient } from '../db/client.ts';
import type { Prisma } from '../db/generated/client.ts';
import type { ProviderConfig, ResolvedConfig } from '../config/schema.ts';
import { upstreamAgent } from '../upstream/http.ts';
import { CATALOG_SOURCES, vendorOf } from '../providers/registry.ts';
import { at, type CatalogSourceId, type Resolved } from '../providers/catalog-source.ts';
import type { JsonObject, JsonValue } from '../upstream/json.ts';

export { UNKNOWN_PRICES, type Resolved } from '../providers/catalog-source.ts';
export type Source = CatalogSourceId;

/** A model list entry as its source sent it: every field is checked where it is read. */
type Entry = JsonObject & { id: string };
const isEntry = (v: JsonValue): v is Entry => v !== null && typeof v === 'object' && !Array.isArray(v) && typeof v.id === 'string';

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
  private readonly index = new Map<Source, Index>();

  constructor(private readonly prisma: PrismaClient) {}

  private put(source: Source, entries: JsonValue[]) {
    const idx = new Map<string, Entry>();
    for (const e of entries) if (isEntry(e)) idx.set(e.id.toLowerCase(), e);
    this.index.set(source, idx);
  }

  /** The last known lists from the database. */
  async load(): Promise<number> {
    const rows = await this.prisma.catalogMetadata.findMany();
    for (const { id } of CATALOG_SOURCES) this.put(id, rows.filter((r) => r.source === id).map((r) => storedEntry(r.data)));
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
    return this.index.get(source)?.size ?? 0;
  }

  resolve(model: ResolvedConfig['models'][number], providers: Map<string, ProviderConfig>): { source: Source; fields: Resolved } | null {
    const ids = candidateIds(model, providers);
    for (const source of CATALOG_SOURCES) {
      const index = this.index.get(source.id);
      for (const id of ids) {
        const hit = index?.get(id);
        if (hit) return { source: source.id, fields: source.map(hit) };
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
