// A provider's credentials as the router sees them: one entry per key of its pool (`api_keys`),
// or the one `api_key` (or none), each with the provider config its adapters are called with.
import type { PoolKeyConfig, ProviderConfig } from '../config/schema.ts';

/** The limits a key's account has at the provider, enforced across instances (router.ts). */
export type KeyLimits = { requestsPerMinute?: number; tokensPerMinute?: number; maxConcurrency?: number };

export type PoolKey = {
  /** Position in `api_keys` as configured, unset keys counted (0 for a provider with `api_key`): stable while keys come and go. */
  index: number;
  /** One of several keys: it cools down after 429/401/403 and is measured on its own (a single key is its provider). */
  pooled: boolean;
  /** Its routing-state target (`key:<label>`). */
  target: string;
  /** What names the key: `openai#primary`, `openai#1`; the provider id alone for a provider without a pool. */
  label: string;
  /** The provider config an attempt with this key is made with: its `api_key` is this key. */
  provider: ProviderConfig;
  limits: KeyLimits | null;
};

const pools = new WeakMap<ProviderConfig, PoolKey[]>();

/** What names the key that served (X-Gateway-Upstream, failure lists): its label, else the provider id. */
export const labelOf = (t: { provider: { id: string }; key?: Pick<PoolKey, 'label'> }) => t.key?.label ?? t.provider.id;

/** The key as the health samples and logs name it: its label for a key of `api_keys`, '' for a provider's single `api_key`. */
export const sampleKeyOf = (t: { provider: { id: string }; key?: Pick<PoolKey, 'label'> }) => (t.key && t.key.label !== t.provider.id ? t.key.label : '');

function limitsOf(k: PoolKeyConfig): KeyLimits | null {
  if (!k.requests_per_minute && !k.tokens_per_minute && !k.max_concurrency) return null;
  return { requestsPerMinute: k.requests_per_minute, tokensPerMinute: k.tokens_per_minute, maxConcurrency: k.max_concurrency };
}

/**
 * The provider's keys, built once per loaded config (the objects are reused by every request):
 * a provider without `api_keys` is a pool of one, labelled with the provider id alone.
 */
export function keysOf(provider: ProviderConfig): PoolKey[] {
  let keys = pools.get(provider);
  if (!keys) {
    const { api_keys, ...rest } = provider;
    const entries = (api_keys ?? []).flatMap((k, index) => (k === null ? [] : [{ index, entry: typeof k === 'string' ? { key: k } : k }]));
    const pooled = entries.length > 1;
    keys = entries.length
      ? entries.map(({ index, entry }) => {
          const label = `${provider.id}#${entry.alias ?? index}`;
          return { index, pooled, target: `key:${label}`, label, provider: { ...rest, api_key: entry.key }, limits: limitsOf(entry) };
        })
      : [{ index: 0, pooled: false, target: `key:${provider.id}`, label: provider.id, provider, limits: null }];
    pools.set(provider, keys);
  }
  return keys;
}
