import type { AccountService } from './accounts/service.ts';
import type { Billing } from './billing/hooks.ts';
import type { UsageLedger } from './billing/ledger.ts';
import type { Clock } from './runtime/clock.ts';
import type { SearchBackend } from './search/backends.ts';
import type { HealthRecorder } from './routing/health.ts';
import type { KeyAuthenticator } from './auth/key-cache.ts';
import type { Catalog } from './catalog/catalog.ts';
import type { ResolvedConfig } from './config/schema.ts';
import type { Database } from './db/client.ts';
import type { Metrics } from './http/metrics.ts';
import type { CounterStore } from './stores/index.ts';

/** What the HTTP layer needs, built once by main.ts (or by a test). */
export type Services = {
  config: ResolvedConfig;
  db: Database;
  counters: CounterStore;
  keys: KeyAuthenticator;
  accounts: AccountService;
  catalog: Catalog;
  metrics: Metrics;
  health: HealthRecorder;
  billing: Billing;
  ledger: UsageLedger;
  clock: Clock;
  /** The gateway's own web search, when configured. */
  search: SearchBackend | null;
  adminToken: string;
  version: string;
};
