// Which provider type serves which capability, and with which adapter: derived from the vendors'
// manifests (providers/<vendor>/index.ts), the one list below. A missing adapter means the type
// cannot serve that capability: routing never offers such an upstream (routing/targets.ts) and the
// config refuses one (`vendorIssues`, shown by `config check`).
import { ModelEndpoint } from '../../contract/models.ts';
import { list, str, type ProviderType } from '../config/schema.ts';
import { anthropic } from './anthropic/index.ts';
import type { Capability } from '../config/capabilities.ts';
import type { AdapterRow, CapabilityAdapters } from './capabilities.ts';
import { elevenlabs } from './elevenlabs/index.ts';
import { gemini } from './gemini/index.ts';
import type { ImageTokenRule, VendorManifest } from './manifest.ts';
import { openaiCompatible } from './openai-compatible/index.ts';
import { openai } from './openai/index.ts';
import type { CatalogSource } from './catalog-source.ts';
import { openRouterCatalog } from './openrouter/catalog.ts';
import { poeCatalog } from './poe/catalog.ts';

/** Every vendor, in the order the catalog and `config check` list them. */
export const VENDORS: readonly VendorManifest[] = [openai, openaiCompatible, anthropic, gemini, elevenlabs];

/** The public model lists the catalog's metadata comes from, in the order a model is looked up in them. */
export const CATALOG_SOURCES: readonly CatalogSource[] = [openRouterCatalog, poeCatalog];

const byType = new Map<string, VendorManifest>(VENDORS.map((v) => [v.type, v]));

/** The manifest of a provider type (undefined for a type no vendor declares). */
export const vendorOf = (type: string): VendorManifest | undefined => byType.get(type);

export const registry = Object.fromEntries(VENDORS.map((v) => [v.type, v.adapters])) as Record<ProviderType, AdapterRow>;

/** The adapter serving `capability` on providers of `type`, or undefined: it cannot. */
export function adapterFor<C extends Capability>(type: ProviderType, capability: C): CapabilityAdapters[C] | undefined {
  return byType.get(type)?.adapters[capability] as CapabilityAdapters[C] | undefined;
}

const mostOf =
  (rules: readonly ImageTokenRule[]): ImageTokenRule =>
  (size, detail) =>
    rules.reduce((most, rule) => Math.max(most, rule(size, detail)), 0);

/**
 * The most any provider bills for one image: the largest of every vendor's rule. OpenAI-compatible
 * servers (any model behind OpenAI's wire) are taken to bill no more than that.
 */
export const anyImageTokens: ImageTokenRule = mostOf(VENDORS.flatMap((v) => (v.imageTokens ? [v.imageTokens] : [])));

const imageRules = new Map<string, ImageTokenRule>();

/**
 * The most a model's upstreams bill for one image, by their provider types: the largest of their
 * vendors' rules, or `anyImageTokens` when one of them has no rule of its own.
 */
export function imageTokensOf(types: readonly string[]): ImageTokenRule {
  const key = types.join('\u0000');
  let rule = imageRules.get(key);
  if (!rule) {
    const rules = types.map((t) => byType.get(t)?.imageTokens);
    rule = rules.every((r) => r !== undefined) && rules.length ? mostOf([...new Set(rules)]) : anyImageTokens;
    imageRules.set(key, rule);
  }
  return rule;
}

/** Capabilities some vendor serves (all, today); a capability no vendor serves would have no upstream judged. */
export const builtCapabilities = (): Capability[] => ModelEndpoint.options.filter((c) => VENDORS.some((v) => v.adapters[c] !== undefined));

/** The provider types that can serve `capability`, or null for a capability no vendor serves. */
export function typesServing(capability: Capability): ProviderType[] | null {
  if (!builtCapabilities().includes(capability)) return null;
  return VENDORS.filter((v) => v.adapters[capability] !== undefined).map((v) => v.type);
}

/**
 * Provider types no vendor declares, and upstreams whose provider type cannot serve their model's
 * endpoint (another type would never be tried). Reads the input defensively, like the config's own
 * reference checks, so the loader reports them together with shape errors elsewhere in the file.
 */
export function vendorIssues(input: unknown): { path: (string | number)[]; message: string }[] {
  const cfg = input && typeof input === 'object' ? (input as Record<string, unknown>) : {};
  const types = new Map(list(cfg.providers).flatMap((p) => (str(p.id) !== undefined && str(p.type) !== undefined ? [[str(p.id)!, str(p.type)!]] : [])));
  const issues: { path: (string | number)[]; message: string }[] = [];
  list(cfg.providers).forEach((p, i) => {
    const type = str(p.type);
    if (type !== undefined && !byType.has(type)) issues.push({ path: ['providers', i, 'type'], message: `Invalid option: expected one of ${VENDORS.map((v) => `"${v.type}"`).join('|')}` });
  });
  list(cfg.models).forEach((m, i) => {
    const endpoint = ModelEndpoint.safeParse(m.endpoint);
    const serving = endpoint.success ? typesServing(endpoint.data) : null;
    list(m.upstreams).forEach((u, j) => {
      const provider = str(u.provider);
      const type = provider === undefined ? undefined : types.get(provider);
      if (type && byType.has(type) && serving && !serving.includes(type)) {
        issues.push({ path: ['models', i, 'upstreams', j, 'provider'], message: `provider "${provider}" is ${type}, which cannot serve ${m.endpoint} (served by: ${serving.join(', ')})` });
      }
    });
  });
  return issues;
}
