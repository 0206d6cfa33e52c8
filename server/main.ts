// Process entry: config -> database (+ migrations) -> counters -> app -> listen, and a graceful stop.
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
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
import { holdSecrets } from './boot/held-secrets.ts';
import { heldSecrets } from './runtime/held-secrets.ts';
import { SharedSettings } from './db/shared-settings.ts';
import { openBlobStore } from './blobs/select.ts';
import { UrlSigner } from './blobs/signed-url.ts';
import { JobRunner } from './jobs/runner.ts';
import { BullQueue } from './jobs/queue.ts';
import { JobService } from './jobs/service.ts';
import { JobKinds, type JobKind } from './jobs/kinds.ts';
import type { CapabilityDeps } from './capabilities/deps.ts';
import { assemblePipeline } from './pipeline/concerns.ts';
import type { Concern } from './pipeline/concern.ts';
import { CAPABILITY_DESCRIPTORS } from './capabilities/index.ts';
import { OAuthAuthenticator } from './oauth/authenticator.ts';
import { OAuthService } from './oauth/service.ts';
import { AccountDirectory } from './accounts/directory.ts';
import { IdentityProviders } from './accounts/identity.ts';
import { Sessions } from './web/sessions.ts';
import { HealthRecorder } from './routing/health.ts';
import { RequestTrails } from './observe/request-trail.ts';
import { startTracing } from './observe/tracing.ts';
import { vendorOf } from './providers/registry.ts';
import { RequestLog } from './requests/request-log.ts';
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
import { configWarnings, openSignup, signupWarnings } from './boot/warnings.ts';
import { secretProblems } from './config/placeholders.ts';
import { deploymentWarnings } from './config/deployment.ts';
import { databaseTimeouts, openDatabase } from './db/client.ts';
import { createMetrics } from './runtime/metrics.ts';
import { projectPath } from './runtime/paths.ts';
import { StartupError, acquireEmbeddedLock, dataDirOf, ensureDataDir, writeServerInfo } from './runtime/data-dir.ts';
import { checkListenAddress, listenError } from './runtime/port.ts';
import { Drain, hardLimitMs, onStopSignals, shutdownTimings } from './runtime/shutdown.ts';
import { WorkerPool, joinPool, workerCount, workerSlot } from './runtime/cluster.ts';
import { within } from './runtime/within.ts';
import { drainHttp } from './http/graceful-close.ts';
import type { Services } from './http/services.ts';
import { defaultRedisTimeouts, envMs, openCounterStore, openItemStore, type RedisTimeouts } from './stores/index.ts';
import { RedisCounterStore } from './stores/redis.ts';
import { createLogger as createFormattedLogger } from './runtime/log-format.ts';

export const version: string = JSON.parse(readFileSync(projectPath('package.json'), 'utf8')).version;

/** How long start-up waits for the ledger's first upkeep (its partitions) before serving anyway. */
const FIRST_UPKEEP_WAIT_MS = 5_000;

/** The gateway's logger (`destination`: where its lines go instead of stdout, for tests). */
export function createLogger(env: NodeJS.ProcessEnv, destination?: Parameters<typeof createFormattedLogger>[2]): Logger {
  return createFormattedLogger(env, redactedPaths, destination);
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

/**
 * What a caller adds to the gateway it starts: job kinds besides the capabilities' own (a test's);
 * `worker`: this process is worker N of `serve --workers`, whose primary already logged the
 * config, checked the listen address, and writes the server info file (decision 0029).
 */
/** What an embedding program (a test) adds: job kinds, and concerns run after the gateway's own (pipeline/concerns.ts). */
export type GatewayExtras = { jobKinds?: JobKind[]; worker?: number; concerns?: Concern[] };

/** The config's summary and warnings, as start-up logs them (once per deployment start: the primary's with workers). */
function logConfig(logger: Logger, env: NodeJS.ProcessEnv, { config, enabledFromEnv }: ReturnType<typeof loadConfig>): void {
  if (enabledFromEnv?.length) {
    logger.info(`no config file: enabled ${enabledFromEnv.join(', ')} from API keys in the environment (${config.models.length} models)`);
  } else if (!enabledFromEnv) {
    logger.info(`config ${config.source}: ${config.providers.length} providers, ${config.models.length} models, plans ${config.plans.map((p) => p.id).join(', ')}`);
  }
  // Nothing can be called: said as a warning, with the exact variables (the dashboard says it too).
  const setup = catalogSetup(config);
  if (setup) logger.warn(setupAdvice(setup, config.source));
  for (const warning of configWarnings(config)) logger.warn(warning);
  for (const warning of signupWarnings(config, env)) logger.warn(warning);
  for (const warning of deploymentWarnings(env)) logger.warn(warning);
}

/** GATEWAY_SECRET and GATEWAY_ADMIN_TOKEN, refused before anything is opened when they are placeholders (or the secret too short). */
function checkSecrets(env: NodeJS.ProcessEnv): void {
  const problems = secretProblems(env);
  if (problems.length) throw new StartupError(problems.join(' '));
}

/** Who may create an account, for the start-up log (decision 0033). */
function signupSummary(config: ReturnType<typeof loadConfig>['config']): string {
  const open = openSignup(config);
  if (open) return `sign-up: open to ${open.who} through ${open.via} (${open.setting})`;
  return 'sign-up: closed; operators invite users (model-gateway users create, then users reset-link)';
}

/** HOST and PORT, checked. */
function listenAddressOf(env: NodeJS.ProcessEnv): { host: string; port: number } {
  const host = env.HOST ?? '0.0.0.0';
  const port = Number(env.PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new StartupError(`PORT ${env.PORT} is not a port number: set PORT to a number from 1 to 65535 (0: any free port).`);
  return { host, port };
}

export async function startGateway(env: NodeJS.ProcessEnv = process.env, logger: Logger = createLogger(env), extras: GatewayExtras = {}): Promise<RunningGateway> {
  const loaded = loadConfig(env);
  const { config } = loaded;
  // Before anything can log, answer or trace them: the secrets are redacted by value from now on.
  holdSecrets(config, env);
  if (!extras.worker) logConfig(logger, env, loaded);
  checkSecrets(env);

  // What the operator can get wrong about the machine is checked before the database is opened
  // and migrated (seconds): DATA_DIR, then the port.
  const dataDir = dataDirOf(env);
  ensureDataDir(dataDir);
  const { host, port } = listenAddressOf(env);
  const timings = shutdownTimings(env);
  // While it holds, /readyz answers 503, answers close their connections, and the streams still
  // open at SHUTDOWN_TIMEOUT_MS are ended (decision 0029).
  const drain = new Drain();
  const lock = env.DATABASE_URL ? null : acquireEmbeddedLock(dataDir);
  const cleanups: (() => Promise<void> | void)[] = [];
  const cleanup = async () => {
    for (const fn of cleanups.reverse()) await Promise.resolve(fn()).catch((err) => logger.error({ err }, 'shutdown step failed'));
    cleanups.length = 0;
  };
  if (lock) cleanups.push(() => lock.release());
  try {
    // A worker shares its primary's listening socket: the primary checked the address before forking.
    if (!extras.worker) await checkListenAddress(host, port);
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
    const metrics = createMetrics();
    const ledger = new UsageLedger(db.sql, path.join(dataDir, 'ledger'), {
      flushMs: Number(env.LEDGER_FLUSH_MS ?? 1000),
      maxPending: Number(env.LEDGER_MAX_PENDING ?? 100_000),
      onError: (err, state) =>
        logger.error(
          { err, ...state },
          `usage ledger write failed; ${state.pending} record(s) wait in memory${state.spilledSegments ? ` and ${state.spilledSegments} segment file(s) on disk` : ''}, next attempt in ${Math.round(state.retryInMs / 100) / 10} s`,
        ),
      onRejected: (record, err, file) => {
        metrics.ledgerRejected.inc();
        const id = record && typeof record === 'object' ? (record as { requestId?: unknown }).requestId : undefined;
        logger.error({ err, request_id: typeof id === 'string' ? id.slice(0, 128) : undefined, file }, `usage ledger: a record the database refused was set aside in ${file}; the others were written`);
      },
    });
    cleanups.push(() => ledger.close());
    // The ledger's partitions for the days about to be written, and retention, now and hourly. The
    // first run is waited for, up to a bound (it never fails the start): on a new database the
    // day's partition does not exist yet, and a ledger write routed to the default partition while
    // that partition is being made fails ("violates partition constraint"; written a second later,
    // but said as an error). A row written before its day's partition exists waits in the default
    // partition and moves into its own when the partition is made.
    const upkeep = new LedgerMaintenance(db.sql, config.ledger, clock, {
      done: (r) => {
        if (r.created.length || r.dropped.length || r.strayRowsDeleted || r.aggregatesDeleted) logger.info({ ...r }, 'usage ledger upkeep');
      },
      failed: (err) => logger.error({ err }, 'usage ledger upkeep failed; it runs again within the hour'),
    });
    cleanups.push(() => upkeep.close());
    await within(upkeep.run(), FIRST_UPKEEP_WAIT_MS);
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
    heldSecrets.add(secret, admin.tokens.known);
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
    // Each request's trail: the request log's record and, when tracing is on, the tracer's spans.
    const trails = new RequestTrails();
    // OTEL_EXPORTER_OTLP_ENDPOINT set: spans from the trails (nothing loaded otherwise). Shut down
    // after the app has drained (cleanups run in reverse): the last requests' spans are sent.
    const tracing = await startTracing(env, trails, logger, {
      version,
      upstream: (id) => {
        const p = catalog.providers.get(id);
        const vendor = p && vendorOf(p.type);
        return p && { name: vendor?.genAiProviderName, baseUrl: vendor?.client.baseUrl(p) };
      },
    });
    if (tracing) cleanups.push(() => tracing.shutdown());
    const billing = new QuotaBilling(config, counters, ledger, clock, (id) => catalog.model(id), settlements, (id) => catalog.entry(id)?.pricing, budgetAlerts, trails);
    let itemWarnedAt = -Infinity;
    const items = openItemStore(counters, (err) => {
      // Once a minute at most: during an outage every translated answer fails to store its items.
      if (clock.now() - itemWarnedAt < 60_000) return;
      itemWarnedAt = clock.now();
      logger.warn({ err: String(err) }, 'Responses items not kept in Redis: an item_reference to them will be unknown');
    });
    // The capabilities add their job kinds below, once what they run with exists.
    const jobKinds = new JobKinds();
    const jobDeps = { config, db, clock, counters, billing, catalog, trails };
    // With Redis, BullMQ brings due jobs at once and the database poll is only the safety net.
    const jobRunner = new JobRunner(jobDeps, opened.store, jobKinds, logger, { leaseMs: Number(env.JOB_LEASE_MS ?? 30_000), pollMs: Number(env.JOB_POLL_MS ?? (env.REDIS_URL ? 5_000 : 500)) });
    const jobs = new JobService(jobDeps, opened.store, jobKinds, jobRunner);
    const search = openSearchBackend(config.webSearch);
    const pipeline = assemblePipeline({ config, catalog, router, billing, health, metrics, trails }, extras.concerns);
    const capabilities: CapabilityDeps = { config, clock, catalog, pipeline, search, items, jobs, urls, drain };
    jobKinds.add(...CAPABILITY_DESCRIPTORS.flatMap((d) => d.jobKinds?.(capabilities) ?? []), ...(extras.jobKinds ?? []));
    // Records written off the request path in batches; closed after the app (cleanups run in
    // reverse), so the last requests' records are written before the database closes.
    const requestLog = new RequestLog(db.sql, config.requestLog, opened.store, clock, {
      dropped: (reason) => metrics.requestLogDropped.inc({ reason }),
      log: { warn: (obj, msg) => logger.warn(obj, msg), error: (obj, msg) => logger.error(obj, msg) },
    });
    cleanups.push(() => requestLog.close());
    void requestLog.upkeep();
    const services: Services = {
      ...capabilities,
      health,
      router,
      metrics,
      billing,
      trails,
      requestLog,
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
    const app = await buildApp(services, { logger, requestTimeouts: requestTimeouts(env), drain });
    // In-flight requests and streams finish (bounded by SHUTDOWN_TIMEOUT_MS) before anything they
    // bill to closes: the stores are closed after this (cleanups run in reverse).
    cleanups.push(async () => {
      const r = await drainHttp(app, drain, timings, logger);
      logger.info(
        { drain_ms: r.ms, connections: r.connections, streams_ended: r.streamsEnded },
        `HTTP drained in ${r.ms} ms (${r.connections} connection(s) open when the listener closed${r.streamsEnded ? `, ${r.streamsEnded} stream(s) ended at the bound` : ''}${r.cut ? ', the last ones cut' : ''})`,
      );
    });
    const address = await app.listen({ host, port }).catch((err: NodeJS.ErrnoException) => {
      throw listenError(err, host, port);
    });
    const url = address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '[::1]');
    services.listenUrl = url;
    if (!extras.worker) cleanups.push(writeServerInfo(dataDir, { pid: process.pid, url, started_at: new Date().toISOString(), database: db.kind }));
    // Last to start, first to stop: running jobs give their leases back before the stores close.
    if (env.REDIS_URL) jobRunner.queue = await BullQueue.open(env.REDIS_URL, env.REDIS_KEY_PREFIX ?? 'mg:', config.jobs.concurrency, (id) => jobRunner.runById(id));
    jobRunner.start();
    cleanups.push(() => jobRunner.close());
    logger.info(`model-gateway ${version} listening on ${address} — dashboard ${url}/, API ${url}/v1, reference ${url}/docs`);
    logger.info(`admin API: ${admin.source}`);
    if (!extras.worker) {
      logger.info(signupSummary(config));
      // The first account is the administrator: said while there is none (decision 0033).
      if (config.auth.local.enabled && !(await db.prisma.user.findFirst({ select: { id: true } }))) {
        logger.info(
          `no account yet: the first account created at ${url}/signup becomes the administrator. From this machine the form needs nothing more; from another one it asks for the admin token (${admin.source}).`,
        );
      }
    }
    // Draining begins before the first step: /readyz says so while the jobs give their leases back.
    const close = async () => {
      drain.begin();
      await cleanup();
    };
    return { url, services, close };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

export type ServeOptions = {
  /** `--workers` as typed (it wins over WORKERS). */
  workers?: string;
};

const startFailure = (logger: Logger, err: unknown) => logger.fatal(`cannot start: ${(err as Error).message}`);

/** The idle collector (server/runtime/idle-gc.ts) of a serving process; the function stops it. */
function idleGc(env: NodeJS.ProcessEnv, logger: Logger): () => void {
  if (env.GATEWAY_IDLE_GC === 'off') return () => {};
  return startIdleGc({
    onCollect: ({ beforeBytes, afterBytes, ms }) => logger.debug(`idle: heap ${Math.round(beforeBytes / 2 ** 20)} -> ${Math.round(afterBytes / 2 ** 20)} MB in ${Math.round(ms)} ms`),
  });
}

/**
 * Runs until SIGTERM/SIGINT, then drains (decision 0029): /readyz answers 503, the listener closes,
 * in-flight requests and streams finish within SHUTDOWN_TIMEOUT_MS, jobs give their leases back,
 * settlements and the ledger are flushed, the stores close. With several workers (`--workers`,
 * WORKERS) this process is their primary: it checks what can be checked once, forks them, replaces
 * one that dies, and passes the signal on.
 */
export async function serve(env: NodeJS.ProcessEnv = process.env, opts: ServeOptions = {}): Promise<void> {
  let logger: Logger;
  try {
    logger = createLogger(env);
  } catch (err) {
    process.stderr.write(`cannot start: ${(err as Error).message}\n`);
    process.exitCode = 1;
    return;
  }
  const slot = workerSlot(env);
  // Every line of a worker names it: the workers write to one stdout.
  if (slot !== null) return serveWorker(env, logger.child({ worker: slot }), slot);
  let count: number;
  try {
    count = workerCount(opts.workers, env);
    shutdownTimings(env);
  } catch (err) {
    startFailure(logger, err);
    process.exitCode = 1;
    return;
  }
  return count === 1 ? serveOne(env, logger) : servePrimary(env, logger, count);
}

/** One process serving, as without workers. */
async function serveOne(env: NodeJS.ProcessEnv, logger: Logger): Promise<void> {
  let gateway: RunningGateway;
  try {
    gateway = await startGateway(env, logger);
  } catch (err) {
    startFailure(logger, err);
    process.exitCode = 1;
    return;
  }
  const stopIdleGc = idleGc(env, logger);
  const limit = hardLimitMs(shutdownTimings(env));
  const off = onStopSignals(
    (signal) =>
      void (async () => {
        const started = Date.now();
        logger.info(`${signal}: shutting down gracefully`);
        const force = setTimeout(() => {
          logger.error(`shutdown took longer than ${limit} ms; exiting`);
          process.exit(1);
        }, limit);
        force.unref();
        stopIdleGc();
        await gateway.close();
        logger.info({ stop_ms: Date.now() - started }, `stopped in ${Date.now() - started} ms`);
        clearTimeout(force);
        // Gone, the handlers would leave a later signal nothing to do; the process exits as its loop empties.
        off();
      })(),
    (signal) => {
      logger.warn(`${signal} again: exiting without finishing what is in flight`);
      process.exit(1);
    },
  );
}

/** Worker `slot` of `serve --workers N`: the gateway on the primary's socket, stopped by the primary's signal. */
async function serveWorker(env: NodeJS.ProcessEnv, logger: Logger, slot: number): Promise<void> {
  let gateway: RunningGateway;
  try {
    gateway = await startGateway(env, logger, { worker: slot });
  } catch (err) {
    startFailure(logger, err);
    // Explicitly: the IPC channel to the primary would keep the process alive.
    process.exit(1);
  }
  const { metrics } = gateway.services;
  const pool = joinPool(metrics.registry);
  metrics.scrape = pool.scrape;
  const stopIdleGc = idleGc(env, logger);
  const limit = hardLimitMs(shutdownTimings(env));
  // Ctrl-C reaches a worker from the terminal and again from the primary: one stop. Listened for
  // before the primary hears "ready": a stop that follows at once would otherwise meet Node's
  // default action, death by SIGTERM, which the primary counts as a failed stop.
  onStopSignals(
    (signal) =>
      void (async () => {
        const started = Date.now();
        logger.info(`${signal}: shutting down gracefully`);
        setTimeout(() => {
          logger.error(`shutdown took longer than ${limit} ms; exiting`);
          process.exit(1);
        }, limit).unref();
        stopIdleGc();
        await gateway.close();
        logger.info({ stop_ms: Date.now() - started }, `stopped in ${Date.now() - started} ms`);
        // Explicitly: the IPC channel to the primary would keep the process alive.
        process.exit(0);
      })(),
    (signal) => {
      logger.warn(`${signal} again: exiting without finishing what is in flight`);
      process.exit(1);
    },
  );
  pool.ready(gateway.url);
}

/**
 * What N workers would each check, or race on, done once before forking: the config (logged once),
 * DATA_DIR and the listen address (a bad one fails once, clearly, not N times), the migrations
 * (safe concurrently, under an advisory lock, but N processes would queue on it), and the
 * deployment's secret and admin token (the first start creates them: N workers would race to).
 */
async function prepareWorkers(env: NodeJS.ProcessEnv, logger: Logger): Promise<void> {
  const loaded = loadConfig(env);
  holdSecrets(loaded.config, env);
  logConfig(logger, env, loaded);
  checkSecrets(env);
  const dataDir = dataDirOf(env);
  ensureDataDir(dataDir);
  const { host, port } = listenAddressOf(env);
  await checkListenAddress(host, port);
  const started = Date.now();
  const db = await openDatabase({ databaseUrl: env.DATABASE_URL, dataDir, timeouts: databaseTimeouts(env), progress: (message) => logger.info(`database: ${message}`) });
  try {
    const applied = db.migrationsApplied.length;
    logger.info(`database: ${db.kind} (${db.location}) ready in ${Date.now() - started} ms, ${applied ? `${applied} migration${applied === 1 ? '' : 's'} applied` : 'migrations up to date'}`);
    const shared = new SharedSettings(db.prisma);
    const secret = await resolveGatewaySecret(env, shared);
    logger.info(`secret: from ${secret.source}`);
    for (const warning of secret.warnings) logger.warn(warning);
    const admin = await resolveAdminTokens(env, shared);
    heldSecrets.add(secret.secret, admin.tokens.known);
    logger.info(`admin API: ${admin.source}`);
    for (const warning of admin.warnings) logger.warn(warning);
    logger.info(signupSummary(loaded.config));
  } finally {
    await db.close();
  }
}

/** The primary of `serve --workers N`: it serves nothing itself. */
async function servePrimary(env: NodeJS.ProcessEnv, logger: Logger, count: number): Promise<void> {
  try {
    await prepareWorkers(env, logger);
  } catch (err) {
    startFailure(logger, err);
    process.exitCode = 1;
    return;
  }
  // The primary is idle from now on: what loading the config and migrating left is collected.
  const stopIdleGc = idleGc(env, logger);
  const dataDir = dataDirOf(env);
  const startedAt = new Date().toISOString();
  // Written when a worker starts serving or one that served exits (workers, serving), removed at the end.
  const info: { remove: (() => void) | null; announced: boolean } = { remove: null, announced: false };
  logger.info(`workers: starting ${count} worker processes on one port (this machine has ${availableParallelism()} cores)`);
  const pool = new WorkerPool({
    count,
    log: logger,
    // A worker's own limit, and a margin for its exit.
    stopLimitMs: hardLimitMs(shutdownTimings(env)) + 2_000,
    onServing: (url, serving) => {
      // Rewritten in place (renamed over): a reader sees the old or the new count.
      info.remove = writeServerInfo(dataDir, { pid: process.pid, url, started_at: startedAt, database: 'postgresql', workers: count, serving });
      if (serving === count && !info.announced) {
        info.announced = true;
        logger.info(`model-gateway ${version} listening on ${url} with ${count} workers — dashboard ${url}/, API ${url}/v1, reference ${url}/docs`);
      }
    },
  });
  const off = onStopSignals(
    (signal) => pool.stop(signal),
    (signal) => {
      logger.warn(`${signal} again: the workers are killed without finishing what they serve`);
      pool.kill();
    },
  );
  const code = await pool.run();
  off();
  stopIdleGc();
  info.remove?.();
  logger.info(`stopped (${count} workers)`);
  process.exitCode = code;
}
