import type { AccountService } from '../accounts/service.ts';
import type { Billing } from '../billing/hooks.ts';
import type { UsageLedger } from '../billing/ledger.ts';
import type { BudgetAlerts } from '../billing/budget-alerts.ts';
import type { Clock } from '../runtime/clock.ts';
import type { SearchBackend } from '../search/backends.ts';
import type { OAuthAuthenticator } from '../oauth/authenticator.ts';
import type { OAuthService } from '../oauth/service.ts';
import type { AccountDirectory } from '../accounts/directory.ts';
import type { IdentityProviders } from '../accounts/identity.ts';
import type { Sessions } from '../web/sessions.ts';
import type { HealthRecorder } from '../routing/health.ts';
import type { Router } from '../routing/router.ts';
import type { KeyAuthenticator } from '../auth/key-cache.ts';
import type { Catalog } from '../catalog/catalog.ts';
import type { ResolvedConfig } from '../config/schema.ts';
import type { Database } from '../db/client.ts';
import type { Metrics } from '../runtime/metrics.ts';
import type { CounterStore, ItemStore } from '../stores/index.ts';
import type { JobService } from '../jobs/service.ts';
import type { JobRunner } from '../jobs/runner.ts';
import type { JobKinds } from '../jobs/kinds.ts';
import type { UrlSigner } from '../blobs/signed-url.ts';
import type { AdminTokens } from '../auth/admin-token.ts';
import type { Drain } from '../runtime/shutdown.ts';
import type { RequestTrails } from '../observe/request-trail.ts';
import type { RequestLog } from '../requests/request-log.ts';
import type { RequestPipeline } from '../pipeline/pipeline.ts';

/** What the HTTP layer needs, built once by main.ts (or by a test). */
export type Services = {
  config: ResolvedConfig;
  db: Database;
  counters: CounterStore;
  /** Output items of translated Responses answers, for `item_reference` (shared through Redis when configured). */
  items: ItemStore;
  keys: KeyAuthenticator;
  accounts: AccountService;
  catalog: Catalog;
  metrics: Metrics;
  health: HealthRecorder;
  router: Router;
  /** Every capability call's stages and the concerns hooked on them (pipeline/concerns.ts). */
  pipeline: RequestPipeline;
  /** Each request's trail (attempts, phases): the request log's record and the tracer's spans. */
  trails: RequestTrails;
  /** Writes finished trails as request log records (GET /v1/requests), with captured bodies. */
  requestLog: RequestLog;
  billing: Billing;
  ledger: UsageLedger;
  /** Spend budgets' thresholds crossed: recorded once per period, posted to the operator's webhook; `list` for the usage reports. */
  budgetAlerts: BudgetAlerts;
  clock: Clock;
  /** The gateway's own web search, when configured. */
  search: SearchBackend | null;
  oauth: OAuthService;
  /** Async jobs: submission, polling and downloads; the runner claims and runs them. */
  jobs: JobService;
  jobRunner: JobRunner;
  /** The job kinds this instance runs (the capabilities' own, added at start-up). */
  jobKinds: JobKinds;
  /** Signs and checks hosted-copy links (blobs served without credentials until they expire). */
  urls: UrlSigner;
  oauthAuth: OAuthAuthenticator;
  sessions: Sessions;
  directory: AccountDirectory;
  identityProviders: IdentityProviders;
  /** Fetches OpenRouter/Poe metadata now (it also refreshes on its own schedule). */
  refreshMetadata(): Promise<void>;
  /** Signs short-lived cookies (sign-in state with external providers). */
  cookieSecret: string;
  /**
   * Checks a presented admin token; `known` is the token as this instance has it
   * (GATEWAY_ADMIN_TOKEN or DATA_DIR/admin-token), null on an instance of a PostgreSQL deployment
   * that did not create the deployment's token (it knows only its hash, and accepts it all the same).
   */
  adminTokens: AdminTokens;
  version: string;
  /**
   * The address this instance listens on (set once it listens): links the gateway makes for people
   * (password resets) use public_url, else this, never a request's Host header.
   */
  listenUrl?: string;
  /** Set while the process stops: /readyz answers 503 and open streams are ended at the bound (decision 0029). */
  drain?: Drain;
};
