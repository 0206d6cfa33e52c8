// What the capabilities need of the layers below them: handed in by the composition root
// (main.ts), never looked up. Holds, routing, failover and the request's record are the request
// pipeline's stages (`pipeline`): a capability asks it, never billing/ or routing/ themselves.
import type { UrlSigner } from '../blobs/signed-url.ts';
import type { Catalog } from '../catalog/catalog.ts';
import type { ResolvedConfig } from '../config/schema.ts';
import type { JobService } from '../jobs/service.ts';
import type { Clock } from '../runtime/clock.ts';
import type { Drain } from '../runtime/shutdown.ts';
import type { RequestPipeline } from '../pipeline/pipeline.ts';
import type { SearchBackend } from '../search/backends.ts';
import type { ItemStore } from '../stores/index.ts';

export type CapabilityDeps = {
  config: ResolvedConfig;
  clock: Clock;
  catalog: Catalog;
  /** The request pipeline's stages: admit (holds), plan (routing), attempt (failover), settle, and the request's hooks. */
  pipeline: RequestPipeline;
  /** The gateway's own web search, when configured. */
  search: SearchBackend | null;
  /** Output items of translated Responses answers, for `item_reference` (shared through Redis when configured). */
  items: ItemStore;
  jobs: JobService;
  /** Signs hosted-copy links. */
  urls: UrlSigner;
  /** The process's drain at shutdown: streams still open at its bound are ended through it (none in tests that never stop). */
  drain?: Drain;
};
