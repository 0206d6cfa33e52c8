import type { Logger } from 'pino';
import type { ResolvedConfig } from '../config/schema.ts';
import type { Catalog } from './catalog.ts';
import { CATALOG_SOURCES } from '../providers/registry.ts';
import { fetchModelList, readSnapshot, type MetadataStore } from './metadata.ts';

/**
 * Loads the cached metadata, seeds it from the snapshot when the cache is empty, then refreshes
 * from the sources in the background (unless GATEWAY_METADATA_FETCH=off, e.g. offline or in tests).
 * Returns a stop function.
 */
export async function startMetadataRefresh(opts: { config: ResolvedConfig; store: MetadataStore; catalog: Catalog; logger: Logger; fetch: boolean }): Promise<{ stop(): void; refresh(): Promise<void> }> {
  const { config, store, catalog, logger } = opts;
  const cfg = config.catalogMetadata;
  await store.load();
  const seeded = CATALOG_SOURCES.find((s) => s.snapshot)?.id;
  if (seeded && !store.size(seeded) && cfg.snapshot) {
    try {
      await store.save(seeded, readSnapshot(cfg.snapshot));
      logger.info(`catalog metadata: seeded ${store.size(seeded)} models of ${seeded}'s list from ${cfg.snapshot}`);
    } catch (err) {
      logger.warn({ err }, `catalog metadata: cannot read the snapshot ${cfg.snapshot}`);
    }
  }
  catalog.rebuild();
  const refresh = async () => {
    for (const { id: source } of CATALOG_SOURCES) {
      const s = cfg[source];
      if (!s.enabled) continue;
      try {
        await store.save(source, await fetchModelList(s.url));
        catalog.rebuild();
      } catch (err) {
        logger.warn(`catalog metadata: ${source} refresh failed (${(err as Error).message}); serving the last known`);
      }
    }
  };
  if (!opts.fetch) return { stop: () => {}, refresh };
  const first = setTimeout(() => void refresh(), 1_000);
  const timer = setInterval(() => void refresh(), cfg.refresh_hours * 3_600_000);
  first.unref();
  timer.unref();
  return {
    stop: () => {
      clearTimeout(first);
      clearInterval(timer);
    },
    refresh,
  };
}
