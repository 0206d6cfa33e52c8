// What the capabilities need of the layers below them: handed in by the composition root
// (main.ts), never looked up. A capability function takes the part it uses (`Pick<…>`) where that
// is short, this whole record where it runs the full resolve → reserve → run → respond path.
import type { Billing } from '../billing/hooks.ts';
import type { UrlSigner } from '../blobs/signed-url.ts';
import type { Catalog } from '../catalog/catalog.ts';
import type { ResolvedConfig } from '../config/schema.ts';
import type { JobService } from '../jobs/service.ts';
import type { HealthRecorder } from '../routing/health.ts';
import type { Router } from '../routing/router.ts';
import type { Clock } from '../runtime/clock.ts';
import type { Metrics } from '../runtime/metrics.ts';
import type { Drain } from '../runtime/shutdown.ts';
import type { RequestTrails } from '../observe/request-trail.ts';
import type { SearchBackend } from '../search/backends.ts';
import type { ItemStore } from '../stores/index.ts';

export type CapabilityDeps = {
  config: ResolvedConfig;
  clock: Clock;
  catalog: Catalog;
  health: HealthRecorder;
  /** Strategies, key pools, breakers and cool-downs: which upstream and key each attempt goes to. */
  router: Router;
  metrics: Metrics;
  billing: Billing;
  /** The gateway's own web search, when configured. */
  search: SearchBackend | null;
  /** Output items of translated Responses answers, for `item_reference` (shared through Redis when configured). */
  items: ItemStore;
  jobs: JobService;
  /** Signs hosted-copy links. */
  urls: UrlSigner;
  /** The process's drain at shutdown: streams still open at its bound are ended through it (none in tests that never stop). */
  drain?: Drain;
  /** Each request's trail (attempts, phases): the request log's record and the tracer's spans. */
  trails: RequestTrails;
};
