// The main thread's side of server/db/pglite-worker.mjs: SQL calls and a Prisma driver adapter
// that forward to the database thread. Nothing on the request path waits on these (the ledger and
// health samples are written in batches), so a message hop per statement costs nothing that counts.
import { Worker } from 'node:worker_threads';
import type { IsolationLevel, SqlDriverAdapter, SqlDriverAdapterFactory, SqlQuery, SqlResultSet, Transaction } from '@prisma/driver-adapter-utils';
import { projectPath } from '../runtime/paths.ts';
import type { SqlStatement } from './migrate.ts';

type Pending = { resolve(v: unknown): void; reject(e: unknown): void };

/** Rebuilds an error from the worker; Prisma recognises driver errors by name and `cause`. */
function revive(data: Record<string, unknown>): Error {
  const err = new Error(String(data.message));
  Object.assign(err, data);
  return err;
}

export class PGliteRemote {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private failure: Error | null = null;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (msg: { id: number; value?: unknown; error?: Record<string, unknown> }) => {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      // The thread keeps the process alive only while a caller waits on it.
      if (!this.pending.size) this.worker.unref();
      if (msg.error) p.reject(revive(msg.error));
      else p.resolve(msg.value);
    });
    const fail = (err: Error) => {
      this.failure = err;
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the embedded database thread exited (code ${code})`)));
  }

  static async open(dir: string, extraStartParams: string[]): Promise<PGliteRemote> {
    // The thread allocates little JavaScript (the database lives in WebAssembly memory): a small
    // young generation keeps its share of the process's memory small.
    const worker = new Worker(projectPath('server/db/pglite-worker.mjs'), { workerData: { dir, extraStartParams }, resourceLimits: { maxYoungGenerationSizeMb: 4 } });
    await new Promise<void>((resolve, reject) => {
      const failed = (err: Error) => reject(err);
      const exited = (code: number) => reject(new Error(`the embedded database could not start (code ${code})`));
      worker.once('message', () => {
        worker.off('error', failed).off('exit', exited);
        resolve();
      });
      worker.once('error', failed).once('exit', exited);
    });
    worker.unref();
    return new PGliteRemote(worker);
  }

  call<T>(op: string, ...args: unknown[]): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    this.worker.ref();
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage({ id, op, args });
    });
  }

  query = (sql: string, params: unknown[] = []) => this.call<Record<string, unknown>[]>('query', sql, params);
  exec = (sql: string) => this.call<void>('exec', sql);
  copyCsv = (table: string, columns: string[], csv: string, then?: SqlStatement) => this.call<void>('copyCsv', table, columns, csv, then);
  transaction = (statements: SqlStatement[]) => this.call<Record<string, unknown>[][]>('transaction', statements);

  async close(): Promise<void> {
    if (!this.failure) await this.call('close').catch(() => {});
    await this.worker.terminate();
  }

  /** A Prisma driver adapter whose statements run on the database thread. */
  adapterFactory(): SqlDriverAdapterFactory {
    const remote = this;
    const info = { provider: 'postgres' as const, adapterName: 'pglite-prisma-adapter' };
    const queryable = (tx: number | null) => ({
      ...info,
      queryRaw: (q: SqlQuery) => remote.call<SqlResultSet>('queryRaw', tx, q),
      executeRaw: (q: SqlQuery) => remote.call<number>('executeRaw', tx, q),
    });
    const adapter: SqlDriverAdapter = {
      ...queryable(null),
      executeScript: (script) => remote.call('executeScript', script),
      startTransaction: async (isolationLevel?: IsolationLevel): Promise<Transaction> => {
        const { id, options } = await remote.call<{ id: number; options: Transaction['options'] }>('startTransaction', isolationLevel);
        return { ...queryable(id), options, commit: () => remote.call('commit', id), rollback: () => remote.call('rollback', id) };
      },
      getConnectionInfo: () => ({ supportsRelationJoins: true }),
      dispose: async () => {},
    };
    return { ...info, connect: async () => adapter };
  }
}
