// Process entry: config -> database (+ migrations) -> counters -> app -> listen, and a graceful stop.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import { AccountService } from './accounts/service.ts';
import { UsageLedger } from './billing/ledger.ts';
import { QuotaBilling } from './billing/service.ts';
import { systemClock } from './runtime/clock.ts';
import { startIdleGc } from './runtime/idle-gc.ts';
import { openSearchBackend } from './search/backends.ts';
import { gatewaySecret } from './runtime/secret.ts';
import { OAuthAuthenticator } from './oauth/authenticator.ts';
import { OAuthService } from './oauth/service.ts';
import { AccountDirectory } from './web/accounts.ts';
import { IdentityProviders } from './web/identity.ts';
import { Sessions } from './web/sessions.ts';
import { HealthRecorder } from './routing/health.ts';
import { buildApp, redactedPaths } from './app.ts';
import { KeyAuthenticator } from './auth/key-cache.ts';
import { Catalog } from './catalog/catalog.ts';
import { MetadataStore } from './catalog/metadata.ts';
import { startMetadataRefresh } from './catalog/refresh.ts';
import { loadConfig } from './config/load.ts';
import { openDatabase } from './db/client.ts';
import { createMetrics } from './http/metrics.ts';
import { projectPath } from './runtime/paths.ts';
import { acquireEmbeddedLock, adminToken, dataDirOf, writeServerInfo } from './runtime/data-dir.ts';
import type { Services } from './services.ts';
import { openCounterStore } from './stores/index.ts';

export const version: string = JSON.parse(readFileSync(projectPath('package.json'), 'utf8')).version;

export function createLogger(env: NodeJS.ProcessEnv): Logger {
  return pino({ level: env.LOG_LEVEL ?? 'info', redact: { paths: redactedPaths, censor: '[redacted]' } });
}

export type RunningGateway = { url: string; services: Services; close(): Promise<void> };

export async function startGateway(env: NodeJS.ProcessEnv = process.env, logger: Logger = createLogger(env)): Promise<RunningGateway> {
  const { config, enabledFromEnv } = loadConfig(env);
  if (enabledFromEnv) {
    logger.info(
      enabledFromEnv.length
        ? `no config file: enabled ${enabledFromEnv.join(', ')} from API keys in the environment (${config.models.length} models)`
        : 'no config file and no provider API key in the environment (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, ELEVENLABS_API_KEY, OPENROUTER_API_KEY): the catalog is empty',
    );
  } else {
    logger.info(`config ${config.source}: ${config.providers.length} providers, ${config.models.length} models, plans ${config.plans.map((p) => p.id).join(', ')}`);
  }
  for (const p of config.providers) {
    if (!p.api_key && p.type !== 'openai-compatible') logger.warn(`provider ${p.id} has no api_key: its upstream will refuse requests`);
  }

  const dataDir = dataDirOf(env);
  const lock = env.DATABASE_URL ? null : acquireEmbeddedLock(dataDir);
  const cleanups: (() => Promise<void> | void)[] = [];
  const cleanup = async () => {
    for (const fn of cleanups.reverse()) await Promise.resolve(fn()).catch((err) => logger.error({ err }, 'shutdown step failed'));
    cleanups.length = 0;
  };
  if (lock) cleanups.push(() => lock.release());
  try {
    const started = Date.now();
    const db = await openDatabase({ databaseUrl: env.DATABASE_URL, dataDir });
    cleanups.push(() => db.close());
    logger.info(`database: ${db.kind} (${db.location}), migrations applied in ${Date.now() - started} ms`);

    const counters = openCounterStore(env.REDIS_URL, env.REDIS_KEY_PREFIX);
    cleanups.push(() => counters.close());
    logger.info(`counters: ${counters.kind === 'redis' ? 'Redis' : 'in-process'}`);

    const keys = new KeyAuthenticator(db.prisma, config.keyCacheTtlMs);
    cleanups.push(() => keys.close());
    const clock = systemClock();
    const health = new HealthRecorder(db.prisma, clock);
    cleanups.push(() => health.close());
    const ledger = new UsageLedger(db.sql, path.join(dataDir, 'ledger'), {
      flushMs: Number(env.LEDGER_FLUSH_MS ?? 1000),
      onError: (err) => logger.error({ err }, 'usage ledger write failed; will retry'),
    });
    cleanups.push(() => ledger.close());
    const recovered = await ledger.recover();
    if (recovered) logger.warn(`usage ledger: recovered ${recovered} record(s) a previous process had not written`);
    const secret = gatewaySecret(env);
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
    const services: Services = {
      config,
      db,
      counters,
      keys,
      accounts: new AccountService(db.prisma, config),
      catalog,
      metrics: createMetrics(),
      health,
      billing: new QuotaBilling(config, counters, ledger, clock, (id) => catalog.model(id), (err) =>
        logger.warn({ err }, 'quota settlement failed in the counter store; the request is in the usage ledger and its reservation expires after reservation_ttl_ms'),
      ),
      ledger,
      clock,
      search: openSearchBackend(config.webSearch),
      oauth,
      oauthAuth,
      sessions: new Sessions(db.prisma, clock, config.auth.session_ttl_hours * 3_600_000, secret),
      directory: new AccountDirectory(db.prisma, config.defaultPlan),
      identityProviders: new IdentityProviders(config.auth.providers),
      cookieSecret: secret,
      refreshMetadata: refresher.refresh,
      adminToken: adminToken(env, true)!,
      version,
    };
    const app = await buildApp(services, { logger: logger as never });
    cleanups.push(() => app.close());
    const host = env.HOST ?? '0.0.0.0';
    const port = Number(env.PORT ?? 8080);
    const address = await app.listen({ host, port });
    const url = address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '[::1]');
    cleanups.push(writeServerInfo(dataDir, { pid: process.pid, url, started_at: new Date().toISOString(), database: db.kind }));
    logger.info(`model-gateway ${version} listening on ${address} — API ${url}/v1, reference ${url}/docs`);
    logger.info(
      env.GATEWAY_ADMIN_TOKEN ? 'admin API: token from GATEWAY_ADMIN_TOKEN' : `admin API: token in ${dataDir}/admin-token (the CLI reads it)`,
    );
    return { url, services, close: cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/** Runs until SIGTERM/SIGINT, then stops accepting, finishes in-flight requests and closes stores. */
export async function serve(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const logger = createLogger(env);
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
