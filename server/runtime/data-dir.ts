// Files a gateway keeps under DATA_DIR: the admin token, the embedded-database lock and the
// running server's address, which the CLI reads to reach it.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomToken } from '../auth/secrets.ts';

export const dataDirOf = (env: NodeJS.ProcessEnv) => path.resolve(env.DATA_DIR ?? './data');

/** GATEWAY_ADMIN_TOKEN, else DATA_DIR/admin-token (created on first use, readable by the owner only). */
export function adminToken(env: NodeJS.ProcessEnv, create: boolean): string | null {
  if (env.GATEWAY_ADMIN_TOKEN) return env.GATEWAY_ADMIN_TOKEN;
  const dir = dataDirOf(env);
  const file = path.join(dir, 'admin-token');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  if (!create) return null;
  mkdirSync(dir, { recursive: true });
  const token = `mga-${randomToken(43)}`;
  writeFileSync(file, token + '\n', { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return token;
}

export type ServerInfo = { pid: number; url: string; started_at: string; database: string };

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
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'db.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      return { release: () => rmSync(file, { force: true }) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readFileSync(file, 'utf8'));
      if (holder && holder !== process.pid && isAlive(holder)) {
        throw new Error(
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
