// Process entry: config -> database (+ migrations) -> counters -> app -> listen, and a graceful stop.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { AccountService } from './accounts/service.ts';
import { UsageLedger } from './billing/ledger.ts';
import { LedgerMaintenance } from './billing/ledger-partitions.ts';
import { BudgetAlerts } from './billing/budget-alerts.ts';
import { QuotaBilling } from './billing/service.ts';
import { SettlementRetries } from './billing/settle-retry.ts';
import { systemClock } from './runtime/clock.ts';
import { startIdleGc } from './runtime/idle-gc.ts';
import { openSearchBackend } from './search/backends.ts';
import { resolveGatewaySecret } from './auth/gateway-secret.ts';
import { resolveAdminTokens } from './auth/admin-token.ts';
import { SharedSettings } from './db/shared-settings.ts';
import { openBlobStore } from './blobs/select.ts';
import { UrlSigner } from './blobs/signed-url.ts';
import { JobRunner } from './jobs/runner.ts';
import { BullQueue } from './jobs/queue.ts';
import { JobService } from './jobs/service.ts';
import { JobKinds, type JobKind } from './jobs/kinds.ts';
import type { CapabilityDeps } from './capabilities/deps.ts';
import { CAPABILITY_DESCRIPTORS } from './capabilities/index.ts';
import { OAuthAuthenticator } from './oauth/authenticator.ts';
import { OAuthService } from './oauth/service.ts';
import { AccountDirectory } from './accounts/directory.ts';
import { IdentityProviders } from './accounts/identity.ts';
import { Sessions } from './web/sessions.ts';
import { HealthRecorder } from './routing/health.ts';
import { Router } from './routing/router.ts';
import { openRoutingStateStore } from './stores/routing-state.ts';
import { buildApp, redactedPaths } from './app.ts';
import { requestTimeouts } from './http/client-errors.ts';
import { KeyAuthenticator } from './auth/key-cache.ts';
import { Catalog } from './catalog/catalog.ts';
import { MetadataStore } from './catalog/metadata.ts';
import { startMetadataRefresh } from './catalog/refresh.ts';
import { loadConfig } from './boot/config.ts';
import { catalogSetup, setupAdvice } from './boot/setup.ts';
import { configWarnings } from './boot/warnings.ts';
import { deploymentWarnings } from './config/deployment.ts';
import { databaseTimeouts, openDatabase } from './db/client.ts';
import { createMetrics } from './runtime/metrics.ts';
import { projectPath } from './runtime/paths.ts';
import { StartupError, acquireEmbeddedLock, dataDirOf, ensureDataDir, writeServerInfo } from './runtime/data-dir.ts';
import { checkListenAddress, listenError } from './runtime/port.ts';
import type { Services } from './http/services.ts';
import { defaultRedisTimeouts, envMs, openCounterStore, openItemStore, type RedisTimeouts } from './stores/index.ts';
import { RedisCounterStore } from './stores/redis.ts';
import { createLogger as createFormattedLogger } from './runtime/log-format.ts';

export const version: string = JSON.parse(readFileSync(projectPath('package.json'), 'utf8')).version;

export function createLogger(env: NodeJS.ProcessEnv): Logger {
  return createFormattedLogger(env, redactedPaths);
}

/** REDIS_COMMAND_TIMEOUT_MS, REDIS_CONNECT_TIMEOUT_MS, REDIS_RECONNECT_MAX_MS (README "During an outage"). */
function redisTimeouts(env: NodeJS.ProcessEnv): RedisTimeouts {
  return {
    commandMs: envMs(env, 'REDIS_COMMAND_TIMEOUT_MS', defaultRedisTimeouts.commandMs),
    connectMs: envMs(env, 'REDIS_CONNECT_TIMEOUT_MS', defaultRedisTimeouts.connectMs),
    reconnectMaxMs: envMs(env, 'REDIS_RECONNECT_MAX_MS', defaultRedisTimeouts.reconnectMaxMs),
  };
}

export type RunningGateway = { url: string; services: Services; close(): Promise<void> };

/** What a caller adds to the gateway it starts: job kinds besides the capabilities' own (a test's). */
export type GatewayExtras = { jobKinds?: JobKind[] };

export async function startGateway(env: NodeJS.ProcessEnv = process.env, logger: Logger = createLogger(env), extras: GatewayExtras = {}): Promise<RunningGateway> {
  const { config, enabledFromEnv } = loadConfig(env);
  if (enabledFromEnv?.length) {
    logger.info(`no config file: enabled ${enabledFromEnv.join(', ')} from API keys in the environment (${config.models.length} models)`);
  } else if (!enabledFromEnv) {
    logger.info(`config ${config.source}: ${config.providers.length} providers, ${config.models.length} models, plans ${config.plans.map((p) => p.id).join(', ')}`);
  }
  // Nothing can be called: said as a warning, with the exact variables (the dashboard says it too).
  const setup = catalogSetup(config);
  if (setup) logger.warn(setupAdvice(setup, config.source));
  for (const warning of configWarnings(config)) logger.warn(warning);
  for (const warning of deploymentWarnings(env)) logger.warn(warning);

  // What the operator can get wrong about the machine is checked before the database is opened
  // and migrated (seconds): DATA_DIR, then the port.
  const dataDir = dataDirOf(env);
  ensureDataDir(dataDir);
  const host = env.HOST ?? '0.0.0.0';
  const port = Number(env.PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new StartupError(`PORT ${env.PORT} is not a port number: set PORT to a number from 1 to 65535 (0: any free port).`);
  const lock = env.DATABASE_URL ? null : acquireEmbeddedLock(dataDir);
  const cleanups: (() => Promise<void> | void)[] = [];
  const cleanup = async () => {
    for (const fn of cleanups.reverse()) await Promise.resolve(fn()).catch((err) => logger.error({ err }, 'shutdown step failed'));
    cleanups.length = 0;
  };
  if (lock) cleanups.push(() => lock.release());
  try {
    await checkListenAddress(host, port);
    const started = Date.now();
    const db = await openDatabase({ databaseUrl: env.DATABASE_URL, dataDir, timeouts: databaseTimeouts(env), progress: (message) => logger.info(`database: ${message}`) });
    cleanups.push(() => db.close());
    const applied = db.migrationsApplied.length;
    logger.info(`database: ${db.kind} (${db.location}) ready in ${Date.now() - started} ms, ${applied ? `${applied} migration${applied === 1 ? '' : 's'} applied` : 'migrations up to date'}`);

    const timeouts = redisTimeouts(env);
    const counters = openCounterStore(env.REDIS_URL, env.REDIS_KEY_PREFIX, timeouts);
    cleanups.push(() => counters.close());
    logger.info(`counters: ${counters.kind === 'redis' ? 'Redis' : 'in-process'}`);
    if (counters instanceof RedisCounterStore && !(await counters.ready(timeouts.connectMs))) {
      logger.warn('counters: Redis is not reachable yet; requests that need it answer 503 counter_store_unavailable until it is');
    }

    const keys = new KeyAuthenticator(db.prisma, config.keyCacheTtlMs);
    cleanups.push(() => keys.close());
    const clock = systemClock();
    const health = new HealthRecorder(db.prisma, clock);
    cleanups.push(() => health.close());
    const ledger = new UsageLedger(db.sql, path.join(dataDir, 'ledger'), {
      flushMs: Number(env.LEDGER_FLUSH_MS ?? 1000),
      maxPending: Number(env.LEDGER_MAX_PENDING ?? 100_000),
      onError: (err, state) =>
        logger.error(
          { err, ...state },
          `usage ledger write failed; ${state.pending} record(s) wait in memory${state.spilledSegments ? ` and ${state.spilledSegments} segment file(s) on disk` : ''}, next attempt in ${Math.round(state.retryInMs / 100) / 10} s`,
        ),
    });
    cleanups.push(() => ledger.close());
    // The ledger's partitions for the days about to be written, and retention, now and hourly. Not
    // awaited: a row written before its day's partition exists waits in the default partition and
    // moves into its own when the partition is made.
    const upkeep = new LedgerMaintenance(db.sql, config.ledger, clock, {
      done: (r) => {
        if (r.created.length || r.dropped.length || r.strayRowsDeleted || r.aggregatesDeleted) logger.info({ ...r }, 'usage ledger upkeep');
      },
      failed: (err) => logger.error({ err }, 'usage ledger upkeep failed; it runs again within the hour'),
    });
    cleanups.push(() => upkeep.close());
    void upkeep.run();
    const recovered = await ledger.recover();
    if (recovered) logger.warn(`usage ledger: recovered ${recovered} record(s) a previous process had not written`);
    // Before the ledger's cleanup (cleanups run in reverse): one last try at queued settlements.
    const settlements = new SettlementRetries(counters, clock, {
      warn: (msg, extra) => logger.warn(extra ?? {}, msg),
      error: (msg, extra) => logger.error(extra ?? {}, msg),
    });
    cleanups.push(() => settlements.close());
    // A PostgreSQL deployment keeps what every instance must agree on in the database they share.
    const shared = db.kind === 'postgresql' ? new SharedSettings(db.prisma) : null;
    const { secret, source: secretSource, warnings: secretWarnings } = await resolveGatewaySecret(env, shared);
    logger.info(`secret: from ${secretSource}`);
    for (const warning of secretWarnings) logger.warn(warning);
    const admin = await resolveAdminTokens(env, shared);
    for (const warning of admin.warnings) logger.warn(warning);
    const metadata = new MetadataStore(db.prisma);
    const catalog = new Catalog(config, new Date(), metadata);
    const refresher = await startMetadataRefresh({ config, store: metadata, catalog, logger, fetch: env.GATEWAY_METADATA_FETCH !== 'off' });
    cleanups.push(() => refresher.stop());
    // A revocation drops this instance's cached authentications at once: access tokens always, API
    // keys only when grants (and their keys) died, not on every refresh.
    const oauth = new OAuthService(db.prisma, secret, clock, config.auth.max_apps_per_user, (what) => {
      oauthAuth.invalidateAll();
      if (what === 'grants') keys.invalidateAll();
    });
    const oauthAuth = new OAuthAuthenticator(oauth, config.keyCacheTtlMs, () => clock.now());
    const opened = await openBlobStore(env, dataDir, databaseTimeouts(env));
    cleanups.push(() => opened.close());
    logger.info(`blob store (uploads, job outputs, hosted files): ${opened.description}`);
    const urls = new UrlSigner(secret);
    const metrics = createMetrics();
    const router = new Router(config.routing, counters, openRoutingStateStore(counters), clock, metrics, logger);
    cleanups.push(() => router.close());
    // Budget thresholds crossed by settlements: recorded once across instances, posted to the
    // operator's webhook off the request path. Closed after the app (cleanups run in reverse), so
    // the last settlements' alerts are recorded, and before the database.
    const budgetAlerts = new BudgetAlerts(db.sql, config.budgetAlerts, {
      clock,
      log: { info: (msg, extra) => logger.info(extra ?? {}, msg), warn: (msg, extra) => logger.warn(extra ?? {}, msg), error: (msg, extra) => logger.error(extra ?? {}, msg) },
    });
    budgetAlerts.start();
    cleanups.push(() => budgetAlerts.close());
    if (budgetAlerts.webhookHost) logger.info(`budget alerts: posted to ${budgetAlerts.webhookHost} at ${config.budgetAlerts.thresholds.join('/')} % of a budget`);
    const billing = new QuotaBilling(config, counters, ledger, clock, (id) => catalog.model(id), settlements, (id) => catalog.entry(id)?.pricing, budgetAlerts);
    let itemWarnedAt = -Infinity;
    const items = openItemStore(counters, (err) => {
      // Once a minute at most: during an outage every translated answer fails to store its items.
      if (clock.now() - itemWarnedAt < 60_000) return;
      itemWarnedAt = clock.now();
      logger.warn({ err: String(err) }, 'Responses items not kept in Redis: an item_reference to them will be unknown');
    });
    // The capabilities add their job kinds below, once what they run with exists.
    const jobKinds = new JobKinds();
    const jobDeps = { config, db, clock, counters, billing, catalog };
    // With Redis, BullMQ brings due jobs at once and the database poll is only the safety net.
    const jobRunner = new JobRunner(jobDeps, opened.store, jobKinds, logger, { leaseMs: Number(env.JOB_LEASE_MS ?? 30_000), pollMs: Number(env.JOB_POLL_MS ?? (env.REDIS_URL ? 5_000 : 500)) });
    const jobs = new JobService(jobDeps, opened.store, jobKinds, jobRunner);
    const search = openSearchBackend(config.webSearch);
    const capabilities: CapabilityDeps = { config, clock, catalog, health, router, metrics, billing, search, items, jobs, urls };
    jobKinds.add(...CAPABILITY_DESCRIPTORS.flatMap((d) => d.jobKinds?.(capabilities) ?? []), ...(extras.jobKinds ?? []));
    const services: Services = {
      ...capabilities,
      jobRunner,
      jobKinds,
      db,
      counters,
      keys,
      accounts: new AccountService(db.prisma, config, clock),
      ledger,
      budgetAlerts,
      oauth,
      oauthAuth,
      sessions: new Sessions(db.prisma, clock, config.auth.session_ttl_hours * 3_600_000, secret),
      directory: new AccountDirectory(db.prisma, config.defaultPlan),
      identityProviders: new IdentityProviders(config.auth.providers),
      cookieSecret: secret,
      refreshMetadata: refresher.refresh,
      adminTokens: admin.tokens,
      version,
    };
    const app = await buildApp(services, { logger, requestTimeouts: requestTimeouts(env) });
    cleanups.push(() => app.close());
    const address = await app.listen({ host, port }).catch((err: NodeJS.ErrnoException) => {
      throw listenError(err, host, port);
    });
    const url = address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '[::1]');
    services.listenUrl = url;
    cleanups.push(writeServerInfo(dataDir, { pid: process.pid, url, started_at: new Date().toISOString(), database: db.kind }));
    // Last to start, first to stop: running jobs give their leases back before the stores close.
    if (env.REDIS_URL) jobRunner.queue = await BullQueue.open(env.REDIS_URL, env.REDIS_KEY_PREFIX ?? 'mg:', config.jobs.concurrency, (id) => jobRunner.runById(id));
    jobRunner.start();
    cleanups.push(() => jobRunner.close());
    logger.info(`model-gateway ${version} listening on ${address} — dashboard ${url}/, API ${url}/v1, reference ${url}/docs`);
    logger.info(`admin API: ${admin.source}`);
    return { url, services, close: cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/** Runs until SIGTERM/SIGINT, then stops accepting, finishes in-flight requests and closes stores. */
export async function serve(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  let logger: Logger;
  try {
    logger = createLogger(env);
  } catch (err) {
    process.stderr.write(`cannot start: ${(err as Error).message}\n`);
    process.exitCode = 1;
    return;
  }
  let gateway: RunningGateway;
  try {
    gateway = await startGateway(env, logger);
  } catch (err) {
    logger.fatal(`cannot start: ${(err as Error).message}`);
    process.exitCode = 1;
    return;
  }
  const stopIdleGc =
    env.GATEWAY_IDLE_GC === 'off'
      ? () => {}
      : startIdleGc({
          onCollect: ({ beforeBytes, afterBytes, ms }) =>
            logger.debug(`idle: heap ${Math.round(beforeBytes / 2 ** 20)} -> ${Math.round(afterBytes / 2 ** 20)} MB in ${Math.round(ms)} ms`),
        });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal}: shutting down gracefully`);
    const force = setTimeout(() => {
      logger.error('shutdown took longer than 30 s; exiting');
      process.exit(1);
    }, 30_000);
    force.unref();
    stopIdleGc();
    await gateway.close();
    logger.info('stopped');
    clearTimeout(force);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}
