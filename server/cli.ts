// The operator CLI. With a server running on the embedded database it goes through the server's
// admin API (the database can be opened by one process only); otherwise it opens the database itself.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Command, Option } from 'commander';
import { initClient } from '@ts-rest/core';
import { contract } from '../contract/index.ts';
import { AccountService } from './accounts/service.ts';
import { ConfigError, loadConfig, parseConfig } from './boot/config.ts';
import { configWarnings, signupWarnings } from './boot/warnings.ts';
import { secretProblems } from './config/placeholders.ts';
import { deploymentWarnings } from './config/deployment.ts';
import { openDatabase, type Database } from './db/client.ts';
import { rebuildUsage } from './billing/usage-rebuild.ts';
import { isUtcDay } from './billing/plans.ts';
import { applyMigrations } from './db/migrate.ts';
import { GatewayError } from './runtime/errors.ts';
import { serve, version } from './main.ts';
import { acquireEmbeddedLock, adminToken, dataDirOf, embeddedLockHolder, readServerInfo } from './runtime/data-dir.ts';
import { OPERATOR_LINK_MINUTES } from './accounts/passwords.ts';

type Admin = Pick<AccountService, 'listUsers' | 'createUser' | 'updateUser' | 'listKeys' | 'createKey' | 'revokeKey' | 'setPassword'> & {
  via: string;
  /** The link's address is the gateway's: public_url, else where it listens (or would listen, in direct mode). */
  createResetLink(user: string, o: { expiresInMinutes: number }): ReturnType<AccountService['createResetLink']>;
  close(): Promise<void>;
};

class CliError extends Error {}

/** A config file's text; a file that cannot be read is a config error (exit code 2), said as one. */
function readConfigFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read ${path.resolve(file)}`, [`${path.resolve(file)}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`]);
  }
}

/** Where the CLI looked for the admin token, for messages that say what to fix. */
const tokenSource = (env: NodeJS.ProcessEnv) => (env.GATEWAY_ADMIN_TOKEN ? 'GATEWAY_ADMIN_TOKEN' : path.join(dataDirOf(env), 'admin-token'));
const WHERE_THE_TOKEN_IS = "The gateway's token is in its DATA_DIR/admin-token (with PostgreSQL, that of the instance that created it), or is its GATEWAY_ADMIN_TOKEN when it was started with one";

function apiBackend(baseUrl: string, env: NodeJS.ProcessEnv): Admin {
  const token = adminToken(env, false);
  if (!token) {
    throw new CliError(
      `no admin token to call ${baseUrl}: the CLI reads GATEWAY_ADMIN_TOKEN, else ${tokenSource(env)}, which does not exist. ${WHERE_THE_TOKEN_IS}: set GATEWAY_ADMIN_TOKEN to it, or run the CLI with the gateway's DATA_DIR.`,
    );
  }
  const client = initClient(contract.admin, { baseUrl, baseHeaders: { authorization: `Bearer ${token}` }, throwOnUnknownStatus: false });
  const ok = <T>(r: { status: number; body: unknown }, expected: number): T => {
    if (r.status === expected) return r.body as T;
    const e = (r.body as { error?: { message?: string; code?: string } })?.error;
    if (r.status === 401) {
      throw new CliError(`${baseUrl} refused the admin token (401${e?.code ? ` ${e.code}` : ''}) the CLI read from ${tokenSource(env)}. ${WHERE_THE_TOKEN_IS}: set GATEWAY_ADMIN_TOKEN to that one.`);
    }
    throw new CliError(`${baseUrl} answered ${r.status}: ${e?.message ?? JSON.stringify(r.body)}`);
  };
  return {
    via: `admin API at ${baseUrl}`,
    listUsers: async (query) => ok<{ data: never }>(await client.listUsers({ query: { q: query?.q, limit: query?.limit ?? 500 } }), 200).data,
    createUser: async (body) => ok(await client.createUser({ body }), 201),
    updateUser: async (user, body) => ok(await client.updateUser({ params: { user }, body }), 200),
    listKeys: async (user) => ok<{ data: never }>(await client.listKeys({ query: { user } }), 200).data,
    createKey: async (body) => ok(await client.createKey({ body }), 201),
    revokeKey: async (id) => ok(await client.revokeKey({ params: { id } }), 200),
    setPassword: async (user, password) => ok(await client.setUserPassword({ params: { user }, body: { password } }), 200),
    // The gateway puts its own address (public_url, else where it listens) in the link.
    createResetLink: async (user, { expiresInMinutes }) => ok(await client.createPasswordResetLink({ params: { user }, body: { expires_in_minutes: expiresInMinutes } }), 201),
    close: async () => {},
  };
}

/** The address a gateway started with this environment listens on (HOST, PORT), as a URL. */
function listenAddress(env: NodeJS.ProcessEnv): string {
  const host = !env.HOST || env.HOST === '0.0.0.0' ? '127.0.0.1' : env.HOST === '::' ? '[::1]' : env.HOST.includes(':') ? `[${env.HOST}]` : env.HOST;
  return `http://${host}:${env.PORT ?? 8080}`;
}

async function directBackend(env: NodeJS.ProcessEnv): Promise<Admin> {
  const { config } = loadConfig(env);
  const dataDir = dataDirOf(env);
  const lock = env.DATABASE_URL ? null : acquireEmbeddedLock(dataDir);
  try {
    const db = await openDatabase({ databaseUrl: env.DATABASE_URL, dataDir });
    const svc = new AccountService(db.prisma, config);
    const linkBase = config.publicUrl ?? listenAddress(env);
    return {
      via: `database ${db.location}`,
      listUsers: () => svc.listUsers(),
      createUser: (b) => svc.createUser(b),
      updateUser: (u, c) => svc.updateUser(u, c),
      listKeys: (u) => svc.listKeys(u),
      createKey: (b) => svc.createKey(b),
      revokeKey: (id) => svc.revokeKey(id),
      setPassword: (u, p) => svc.setPassword(u, p),
      createResetLink: (u, o) => svc.createResetLink(u, { ...o, baseUrl: linkBase }),
      close: async () => {
        await db.close();
        lock?.release();
      },
    };
  } catch (err) {
    lock?.release();
    throw err;
  }
}

/** The database opened by this process (the embedded one locked against a server starting meanwhile). */
async function withOwnDatabase<T>(env: NodeJS.ProcessEnv, o: { migrate: boolean }, fn: (db: Database) => Promise<T>): Promise<T> {
  const dir = dataDirOf(env);
  const lock = env.DATABASE_URL ? null : acquireEmbeddedLock(dir);
  try {
    const db = await openDatabase({ databaseUrl: env.DATABASE_URL, dataDir: dir, migrate: o.migrate });
    try {
      return await fn(db);
    } finally {
      await db.close();
    }
  } finally {
    lock?.release();
  }
}

/** GATEWAY_URL, else the running server holding the embedded database, else the database itself. */
async function admin(env: NodeJS.ProcessEnv): Promise<Admin> {
  if (env.GATEWAY_URL) return apiBackend(env.GATEWAY_URL.replace(/\/$/, ''), env);
  if (!env.DATABASE_URL) {
    const dir = dataDirOf(env);
    const holder = embeddedLockHolder(dir);
    if (holder) {
      const info = readServerInfo(dir);
      if (!info) throw new CliError(`process ${holder} holds the embedded database in ${dir} but is not serving yet; try again in a moment`);
      return apiBackend(info.url, env);
    }
  }
  return directBackend(env);
}

/**
 * Reads a line from the terminal without echoing it (raw mode: the characters never reach the
 * screen or the shell's history). Backspace erases, Ctrl-C and Ctrl-D cancel.
 */
function promptHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  // Raw mode first: whatever is typed once the question shows is never echoed.
  stdin.setRawMode(true);
  process.stderr.write(question);
  stdin.setEncoding('utf8');
  stdin.resume();
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = (err: Error | null) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return finish(null);
        if (ch === '\u0003' || ch === '\u0004') return finish(new CliError('cancelled: no password set'));
        if (ch === '\u007f' || ch === '\b') value = Array.from(value).slice(0, -1).join('');
        else if (ch >= ' ') value += ch;
      }
    };
    stdin.on('data', onData);
  });
}

/**
 * The new password: asked twice on a terminal, else the first line of standard input (for scripts:
 * `printf '%s\n' "$PW" | model-gateway users set-password …`). Never a command-line argument, which
 * shell history and the process list would keep.
 */
async function readNewPassword(user: string): Promise<string> {
  if (process.stdin.isTTY) {
    const first = await promptHidden(`New password for ${user}: `);
    if (!first) throw new CliError('no password typed: nothing changed');
    const again = await promptHidden('Repeat it: ');
    if (again !== first) throw new CliError('the two passwords differ: nothing changed');
    return first;
  }
  let input = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) input += chunk as string;
  const line = input.split(/\r?\n/)[0] ?? '';
  if (!line) throw new CliError('no password on standard input: type it at the prompt (run in a terminal), or pipe it as the first line');
  return line;
}

const isLoopback = (url: string) => /^(127\.|\[::1\]$|localhost$)/.test(new URL(url).hostname);

type Printer = { json: boolean };
function print(out: Printer, value: unknown, human: () => string) {
  process.stdout.write(out.json ? JSON.stringify(value, null, 2) + '\n' : human() + '\n');
}

function table(rows: Record<string, unknown>[], columns: string[]): string {
  if (!rows.length) return '(none)';
  const cells = rows.map((r) => columns.map((c) => (r[c] === null || r[c] === undefined ? '-' : String(r[c]))));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(columns), ...cells.map(line)].join('\n');
}

async function withAdmin<T>(cmd: Command, fn: (a: Admin, out: Printer) => Promise<T>) {
  const out = { json: Boolean(cmd.optsWithGlobals().json) };
  const a = await admin(process.env);
  try {
    await fn(a, out);
  } finally {
    await a.close();
  }
}

export function buildCli(): Command {
  const program = new Command('model-gateway')
    .description('Model Gateway: many model providers behind one /v1 API.')
    .version(version)
    .addOption(new Option('--json', 'machine-readable JSON output'))
    .showHelpAfterError()
    .addHelpText(
      'after',
      `
Environment:
  PORT, HOST            where to listen (8080, 0.0.0.0)
  DATA_DIR              this instance's directory: embedded database, admin token, usage ledger (./data)
  DATABASE_URL          PostgreSQL URL; unset: the embedded database under DATA_DIR (one instance)
  REDIS_URL             Redis for counters and generated Responses items; unset: in-process
  GATEWAY_CONFIG        config file (default ./gateway.config.yaml when present)
  GATEWAY_ADMIN_TOKEN   admin API token (default: DATA_DIR/admin-token; with DATABASE_URL the first
                        instance's, accepted by every instance)
  GATEWAY_SECRET        signs links and sign-in state, derives OAuth grants' keys (default: with
                        DATABASE_URL kept in the database for every instance; else DATA_DIR/secret);
                        at least 32 bytes, never a template's placeholder
  BLOB_DIR              uploads and job outputs in this directory, which every instance must share
                        (default: with DATABASE_URL in PostgreSQL; else DATA_DIR/blobs)
  S3_BUCKET, S3_ENDPOINT, S3_REGION, S3_PREFIX, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY,
  S3_FORCE_PATH_STYLE   uploads and job outputs in an S3-compatible bucket (wins over BLOB_DIR)
  WORKERS               serve: worker processes on one port (--workers wins; default: the cores
                        with DATABASE_URL and REDIS_URL, else 1)
  SHUTDOWN_TIMEOUT_MS   serve: how long in-flight requests and streams get to finish at SIGTERM (30000)
  SHUTDOWN_DELAY_MS     serve: /readyz answers 503 this long before the listener closes (0)
  GATEWAY_URL           CLI: manage a gateway at this URL through its admin API

Several instances: the same DATABASE_URL and REDIS_URL on each, and a DATA_DIR each; nothing
else needs to be shared (README, "PostgreSQL and Redis").`,
    );

  program
    .command('serve')
    .description('run the gateway (what `npm start` does)')
    .option(
      '--workers <n>',
      'worker processes sharing the port (wins over WORKERS; default: the cores with DATABASE_URL and REDIS_URL, else 1; more than 1 needs both)',
    )
    .action(async (o: { workers?: string }) => serve(process.env, { workers: o.workers }));

  program
    .command('migrate')
    .description('apply database migrations (the server also applies them at start-up)')
    .action(async (_o, cmd: Command) => {
      const out = { json: Boolean(cmd.optsWithGlobals().json) };
      const env = process.env;
      const dir = dataDirOf(env);
      if (!env.DATABASE_URL && embeddedLockHolder(dir)) {
        print(out, { applied: [], note: 'server running' }, () => `a running gateway holds ${dir}; it applied the migrations at start-up`);
        return;
      }
      await withOwnDatabase(env, { migrate: false }, async (db) => {
        const applied = await applyMigrations(db.sql);
        print(out, { applied, database: db.location }, () =>
          applied.length ? `applied ${applied.length} migration(s) to ${db.location}:\n  ${applied.join('\n  ')}` : `${db.location} is up to date`,
        );
      });
    });

  const usage = program.command('usage').description('the usage ledger');
  usage
    .command('rebuild')
    .description('recompute the daily usage aggregates from the raw ledger rows, a day at a time (idempotent)')
    .option('--from <date>', 'first UTC day (YYYY-MM-DD; default: the oldest day with raw rows)')
    .option('--to <date>', 'last UTC day, inclusive (default: the newest day with raw rows)')
    .action(async (o: { from?: string; to?: string }, cmd: Command) => {
      const out = { json: Boolean(cmd.optsWithGlobals().json) };
      const env = process.env;
      for (const [name, v] of [['--from', o.from], ['--to', o.to]] as const) {
        if (v !== undefined && !isUtcDay(v)) {
          throw new CliError(`${name} '${v}' is not a calendar date (YYYY-MM-DD)`);
        }
      }
      if (o.from && o.to && o.from > o.to) throw new CliError(`--from ${o.from} is after --to ${o.to}`);
      const dir = dataDirOf(env);
      if (!env.DATABASE_URL && embeddedLockHolder(dir)) {
        throw new CliError(`a running gateway (process ${embeddedLockHolder(dir)}) holds the embedded database in ${dir}; stop it, run the rebuild, and start it again`);
      }
      await withOwnDatabase(env, { migrate: true }, async (db) => {
        const result = await rebuildUsage(db.sql, {
          from: o.from,
          to: o.to,
          progress: (p) => {
            if (!out.json) process.stderr.write(`${p.day}  ${p.requests} request(s)  ${p.ms} ms  (${p.n}/${p.of})\n`);
          },
        });
        print(out, { ...result, database: db.location }, () =>
          [
            result.days ? `rebuilt ${result.days} day(s), ${result.from} … ${result.to}: ${result.requests} request(s)` : 'no day with raw ledger rows in that range',
            ...result.notKept.map((d) => `${d}: no raw rows kept (past ledger.retention_days, or never written); aggregates left as they are`),
          ].join('\n'),
        );
      });
    });

  const users = program.command('users').description('manage users');
  users
    .command('create')
    .description('create a user')
    .requiredOption('--email <email>', 'email address (unique)')
    .option('--name <name>', 'display name')
    .option('--plan <plan>', 'plan id (default: the configured default plan)')
    .action(async (o: { email: string; name?: string; plan?: string }, cmd: Command) =>
      withAdmin(cmd, async (a, out) => {
        const u = await a.createUser({ email: o.email, name: o.name, plan: o.plan });
        print(out, u, () => `created user ${u.id} <${u.email}> on plan ${u.plan}`);
      }),
    );
  users
    .command('list')
    .description('list users')
    .action(async (_o, cmd: Command) =>
      withAdmin(cmd, async (a, out) => {
        const list = await a.listUsers();
        print(out, list, () => table(list, ['id', 'email', 'name', 'plan', 'role', 'disabled', 'created_at']));
      }),
    );
  users
    .command('set-plan')
    .description("change a user's plan")
    .argument('<user>', 'user id or email')
    .argument('<plan>', 'plan id')
    .action(async (user: string, plan: string, _o, cmd: Command) =>
      withAdmin(cmd, async (a, out) => {
        const u = await a.updateUser(user, { plan });
        print(out, u, () => `user ${u.id} is now on plan ${u.plan} (running gateways apply it within seconds)`);
      }),
    );
  users
    .command('set-role')
    .description("grant or take the admin role (admins see the operator view of the dashboard)")
    .argument('<user>', 'user id or email')
    .argument('<role>', 'admin or user')
    .action(async (user: string, role: string, _o, cmd: Command) =>
      withAdmin(cmd, async (a, out) => {
        if (role !== 'admin' && role !== 'user') throw new CliError(`role must be admin or user, not '${role}'`);
        const u = await a.updateUser(user, { role });
        print(out, u, () => `user ${u.id} now has the ${u.role} role`);
      }),
    );
  users
    .command('set-password')
    .description("set a user's password (asked twice on a terminal, else the first line of stdin); ends the user's sessions")
    .argument('<user>', 'user id or email')
    .addHelpText('after', '\nThe password is never an argument: shell history would keep it. In scripts:\n  printf \'%s\\n\' "$PASSWORD" | model-gateway users set-password ada@example.com')
    .action(async (user: string, _o, cmd: Command) => {
      // Read before connecting: a prompt waiting on a person must not hold the embedded database.
      const password = await readNewPassword(user);
      await withAdmin(cmd, async (a, out) => {
        const r = await a.setPassword(user, password);
        print(out, r, () => `password set for user ${r.user.id}${r.user.email ? ` <${r.user.email}>` : ''}; ${r.sessions_ended} dashboard session${r.sessions_ended === 1 ? '' : 's'} ended`);
      });
    });
  users
    .command('reset-link')
    .description('make a single-use link that lets a user choose a password (give it to that user only)')
    .argument('<user>', 'user id or email')
    .option('--expires-in <minutes>', `how long the link works (${OPERATOR_LINK_MINUTES.min}–${OPERATOR_LINK_MINUTES.max})`, String(OPERATOR_LINK_MINUTES.default))
    .action(async (user: string, o: { expiresIn: string }, cmd: Command) => {
      const minutes = Number(o.expiresIn);
      if (!Number.isInteger(minutes) || minutes < OPERATOR_LINK_MINUTES.min || minutes > OPERATOR_LINK_MINUTES.max) {
        throw new CliError(`--expires-in must be a whole number of minutes from ${OPERATOR_LINK_MINUTES.min} to ${OPERATOR_LINK_MINUTES.max} (7 days), not '${o.expiresIn}'`);
      }
      await withAdmin(cmd, async (a, out) => {
        const link = await a.createResetLink(user, { expiresInMinutes: minutes });
        print(out, link, () =>
          [
            link.url,
            '',
            `single-use link for user ${link.user_id}${link.email ? ` <${link.email}>` : ''}, valid until ${link.expires_at}. Give it to that user only: whoever opens it can set the password.`,
            ...(isLoopback(link.url) ? ['It points at a loopback address, which only this machine can open: set public_url in the config to the address users reach.'] : []),
          ].join('\n'),
        );
      });
    });
  for (const [name, disabled] of [['disable', true], ['enable', false]] as const) {
    users
      .command(name)
      .description(disabled ? 'disable a user: no sign-in, every key refused (within seconds on running gateways)' : 'enable a disabled user again')
      .argument('<user>', 'user id or email')
      .action(async (user: string, _o, cmd: Command) =>
        withAdmin(cmd, async (a, out) => {
          const u = await a.updateUser(user, { disabled });
          print(out, u, () => `user ${u.id} is ${u.disabled ? 'disabled' : 'enabled'}`);
        }),
      );
  }

  const keys = program.command('keys').description('manage API keys');
  keys
    .command('create')
    .description('create an API key; the key is printed once and only its hash is stored')
    .requiredOption('--user <user>', 'user id or email')
    .option('--name <name>', 'a label for the key')
    .action(async (o: { user: string; name?: string }, cmd: Command) =>
      withAdmin(cmd, async (a, out) => {
        const k = await a.createKey({ user: o.user, name: o.name });
        print(out, k, () => `${k.key}\n\nkey ${k.id} for user ${k.user_id}. Store it now: it cannot be shown again.`);
      }),
    );
  keys
    .command('list')
    .description('list API keys (prefixes only)')
    .option('--user <user>', 'only this user (id or email)')
    .action(async (o: { user?: string }, cmd: Command) =>
      withAdmin(cmd, async (a, out) => {
        const list = await a.listKeys(o.user);
        print(out, list, () => table(list, ['id', 'user_id', 'name', 'prefix', 'created_at', 'last_used_at', 'revoked_at']));
      }),
    );
  keys
    .command('revoke')
    .description('revoke an API key (running gateways refuse it within seconds)')
    .argument('<id>', 'key id (key_…)')
    .action(async (id: string, _o, cmd: Command) =>
      withAdmin(cmd, async (a, out) => {
        const k = await a.revokeKey(id);
        print(out, k, () => `revoked ${k.id} at ${k.revoked_at}`);
      }),
    );

  const config = program.command('config').description('configuration');
  config
    .command('check')
    .description('validate the configuration file (GATEWAY_CONFIG or ./gateway.config.yaml)')
    .option('--file <path>', 'check this file instead')
    .action(async (o: { file?: string }, cmd: Command) => {
      const out = { json: Boolean(cmd.optsWithGlobals().json) };
      const env = process.env;
      const source = o.file ? path.resolve(o.file) : env.GATEWAY_CONFIG ? path.resolve(env.GATEWAY_CONFIG) : undefined;
      // Every mistake at once: the file's, then the environment's secrets (what serve refuses too).
      let cfg: ReturnType<typeof loadConfig>['config'] | null = null;
      let header = '';
      const errors: string[] = [];
      try {
        cfg = o.file ? parseConfig(readConfigFile(o.file), path.resolve(o.file)) : loadConfig(env).config;
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        header = err.message.split('\n')[0]!;
        errors.push(...err.problems);
      }
      const secrets = secretProblems(env);
      errors.push(...secrets);
      // The environment's too: settings an instance has on its own while others are shared.
      const warnings = [...(cfg ? [...configWarnings(cfg), ...signupWarnings(cfg, env)] : []), ...deploymentWarnings(env)];
      if (errors.length) {
        // One JSON document on stdout whatever happened (`| jq` works on errors too); exit code 2.
        header ||= 'invalid environment';
        const message = [header, ...errors.map((e) => `  - ${e}`)].join('\n');
        if (out.json) {
          print(out, { valid: false, source: cfg?.source ?? source ?? null, errors, warnings, error: { message, type: 'config_error', problems: errors } }, () => '');
        } else {
          process.stderr.write(message + '\n');
          if (warnings.length) process.stderr.write(['warnings:', ...warnings.map((w) => `  - ${w}`)].join('\n') + '\n');
        }
        process.exitCode = 2;
        return;
      }
      const config = cfg!;
      const summary = {
        valid: true,
        source: config.source,
        providers: config.providers.map((p) => p.id),
        models: config.models.map((m) => m.id),
        plans: config.plans.map((p) => p.id),
        default_plan: config.defaultPlan,
        errors: [],
        warnings,
      };
      // Warnings (the ones `serve` logs) do not make the configuration invalid: the exit code stays 0.
      print(out, summary, () =>
        [
          `${config.source}: valid${warnings.length ? `, ${warnings.length} warning${warnings.length === 1 ? '' : 's'}` : ''}`,
          `  providers: ${summary.providers.join(', ') || '(none)'}`,
          `  models: ${summary.models.length}`,
          `  plans: ${summary.plans.join(', ')} (default ${config.defaultPlan})`,
          ...(warnings.length ? ['warnings:', ...warnings.map((w) => `  - ${w}`)] : []),
        ].join('\n'),
      );
    });

  return program;
}

export async function runCli(argv: string[]): Promise<void> {
  const program = buildCli();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    const json = argv.includes('--json');
    const message =
      err instanceof ConfigError || err instanceof CliError
        ? err.message
        : err instanceof GatewayError
          ? `${err.message} (${err.code})`
          : `error: ${(err as Error).message}`;
    if (json) {
      const body =
        err instanceof GatewayError
          ? err.toBody()
          : err instanceof ConfigError
            ? { error: { message, type: 'config_error', problems: err.problems } }
            : { error: { message, type: 'cli_error' } };
      // On stdout, like every --json answer: a script reads one JSON document there either way
      // (the exit code says which).
      process.stdout.write(JSON.stringify(body) + '\n');
    } else {
      process.stderr.write(message + '\n');
    }
    process.exitCode = err instanceof ConfigError ? 2 : 1;
  }
}
