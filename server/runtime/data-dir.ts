// Files a gateway keeps under DATA_DIR: the admin token and the secret, the embedded-database lock and the
// running server's address, which the CLI reads to reach it.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import path from 'node:path';
import { randomToken } from './secrets.ts';

export const dataDirOf = (env: NodeJS.ProcessEnv) => path.resolve(env.DATA_DIR ?? './data');

/** A start-up problem the operator fixes: its message says what and how; no stack trace needed. */
export class StartupError extends Error {
  override name = 'StartupError';
}

const WHAT = 'the gateway keeps its embedded database, lock, admin token and usage ledger there';
const FIX = 'or set DATA_DIR to a directory this user can write';

function who(): string {
  try {
    return `user ${userInfo().username}, uid ${process.getuid?.()}`;
  } catch {
    return `uid ${process.getuid?.()}`;
  }
}

/** The nearest existing ancestor of a path (the path itself when it exists). */
function nearestExisting(p: string): string {
  let current = p;
  while (!existsSync(current) && path.dirname(current) !== current) current = path.dirname(current);
  return current;
}

/** Translates a file-system error about DATA_DIR into what to do about it. */
function dataDirError(dir: string, err: NodeJS.ErrnoException): Error {
  const existing = nearestExisting(dir);
  const isDir = (p: string) => {
    try {
      return statSync(p).isDirectory();
    } catch {
      return false;
    }
  };
  if (existing === dir && !isDir(dir)) return new StartupError(`DATA_DIR ${dir} is a file, not a directory: set DATA_DIR to a directory (it is created when missing), or move the file away.`);
  if (existing !== dir && !isDir(existing)) return new StartupError(`DATA_DIR ${dir} cannot be created: ${existing} is a file, not a directory. Set DATA_DIR to a directory (it is created when missing).`);
  if (err.code === 'EROFS') return new StartupError(`DATA_DIR ${dir} is on a read-only file system (${WHAT}): set DATA_DIR to a writable directory, or mount a writable volume there.`);
  if (err.code === 'EACCES' || err.code === 'EPERM') {
    return existing === dir
      ? new StartupError(`DATA_DIR ${dir} is not writable by this process (${who()}); ${WHAT}. Make it writable by that user (chown/chmod), ${FIX}.`)
      : new StartupError(`DATA_DIR ${dir} cannot be created: ${existing} is not writable by this process (${who()}). Create ${dir} writable by that user, ${FIX}.`);
  }
  return new StartupError(`DATA_DIR ${dir}: ${err.message}`);
}

/** Creates DATA_DIR when missing and checks this process can write in it, with a clear message when not. */
export function ensureDataDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
    const probe = path.join(dir, `.write-check-${process.pid}`);
    writeFileSync(probe, '');
    rmSync(probe, { force: true });
  } catch (err) {
    throw dataDirError(dir, err as NodeJS.ErrnoException);
  }
}

/** A secret kept in a file of DATA_DIR (secret, admin-token): its content, or null when there is none. */
export function readSecretFile(file: string): string | null {
  return existsSync(file) ? readFileSync(file, 'utf8').trim() || null : null;
}

/** Writes a new secret file into `dir`, readable by the owner only; never over an existing one. */
export function writeSecretFile(dir: string, file: string, value: string): void {
  ensureDataDir(dir);
  writeFileSync(file, value + '\n', { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
}

/** A new admin token. */
export const newAdminToken = () => `mga-${randomToken(43)}`;

/** GATEWAY_ADMIN_TOKEN, else DATA_DIR/admin-token (created on first use, readable by the owner only). */
export function adminToken(env: NodeJS.ProcessEnv, create: boolean): string | null {
  if (env.GATEWAY_ADMIN_TOKEN) return env.GATEWAY_ADMIN_TOKEN;
  const dir = dataDirOf(env);
  const file = path.join(dir, 'admin-token');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  if (!create) return null;
  const token = newAdminToken();
  writeSecretFile(dir, file, token);
  return token;
}

/**
 * `pid`: the serving process, or with `serve --workers N` the primary, which outlives its workers
 * (`workers`: N; `serving`: how many serve now).
 */
export type ServerInfo = { pid: number; url: string; started_at: string; database: string; workers?: number; serving?: number };

export const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * The embedded database may be opened by one process only. The holder writes its pid here;
 * a lock whose process is gone is stale and taken over.
 */
export function acquireEmbeddedLock(dir: string): { release(): void } {
  ensureDataDir(dir);
  const file = path.join(dir, 'db.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      return { release: () => rmSync(file, { force: true }) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readFileSync(file, 'utf8'));
      if (holder && holder !== process.pid && isAlive(holder)) {
        throw new StartupError(
          `the embedded database in ${dir} is in use by process ${holder}. ` +
            'Stop it, or use DATABASE_URL (PostgreSQL) to run several gateway processes.',
        );
      }
      rmSync(file, { force: true });
    }
  }
  throw new Error(`cannot lock ${file}`);
}

/** The pid holding the embedded database, if that process is alive. */
export function embeddedLockHolder(dir: string): number | null {
  const file = path.join(dir, 'db.lock');
  if (!existsSync(file)) return null;
  const pid = Number(readFileSync(file, 'utf8'));
  return pid && isAlive(pid) ? pid : null;
}

export function writeServerInfo(dir: string, info: ServerInfo): () => void {
  const file = path.join(dir, 'server.json');
  // Written aside and renamed into place: a reader (the CLI, a test waiting for start-up) never
  // sees the file half-written.
  const pending = `${file}.${process.pid}.tmp`;
  writeFileSync(pending, JSON.stringify(info, null, 2) + '\n');
  renameSync(pending, file);
  return () => {
    try {
      const current = JSON.parse(readFileSync(file, 'utf8')) as ServerInfo;
      if (current.pid === process.pid) rmSync(file, { force: true });
    } catch {
      // already gone
    }
  };
}

export function readServerInfo(dir: string): ServerInfo | null {
  const file = path.join(dir, 'server.json');
  if (!existsSync(file)) return null;
  try {
    const info = JSON.parse(readFileSync(file, 'utf8')) as ServerInfo;
    return isAlive(info.pid) ? info : null;
  } catch {
    return null;
  }
}
