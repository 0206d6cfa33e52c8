// Owns the embedded database (PGlite) on its own thread: Postgres running as WebAssembly is CPU
// work, and on the main thread it competed with request handling (a fifth of the busy time under
// load, mostly ledger batches). The main thread talks to it through server/db/pglite-remote.ts.
// Plain JavaScript so it starts without the TypeScript loader, from the sources and the bundle.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';

const lite = await PGlite.create(workerData.dir, { startParams: [...PGlite.defaultStartParams, ...workerData.extraStartParams] });
const adapter = await new PrismaPGlite(lite).connect();
const transactions = new Map();
let nextTx = 1;

async function endTransaction(id, how) {
  const tx = transactions.get(id);
  transactions.delete(id);
  await tx[how]();
}

const ops = {
  query: async (sql, params) => (await lite.query(sql, params)).rows,
  exec: async (sql) => void (await lite.exec(sql)),
  // PGlite reads COPY input from a Blob mounted at /dev/blob. `then` runs in the same transaction.
  copyCsv: async (table, columns, csv, then) => {
    const copy = (q) => q.query(`COPY ${table} (${columns.join(', ')}) FROM '/dev/blob' WITH (FORMAT csv)`, [], { blob: new Blob([csv]) });
    if (!then) return void (await copy(lite));
    await lite.transaction(async (tx) => {
      await copy(tx);
      await tx.query(then.text, then.params ?? []);
    });
  },
  transaction: (statements) =>
    lite.transaction(async (tx) => {
      const results = [];
      for (const s of statements) results.push((await tx.query(s.text, s.params ?? [])).rows);
      return results;
    }),
  queryRaw: (tx, query) => (tx ? transactions.get(tx) : adapter).queryRaw(query),
  executeRaw: (tx, query) => (tx ? transactions.get(tx) : adapter).executeRaw(query),
  executeScript: (script) => adapter.executeScript(script),
  startTransaction: async (isolationLevel) => {
    const tx = await adapter.startTransaction(isolationLevel);
    const id = nextTx++;
    transactions.set(id, tx);
    return { id, options: tx.options };
  },
  commit: (tx) => endTransaction(tx, 'commit'),
  rollback: (tx) => endTransaction(tx, 'rollback'),
  close: async () => {
    await lite.close();
  },
};

/** Errors cross the thread boundary as plain data (name, message, code, Prisma's `cause`, ...). */
function serialise(err) {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  return { ...err, name: err.name, message: err.message, stack: err.stack };
}

parentPort.on('message', async ({ id, op, args }) => {
  try {
    const value = await ops[op](...args);
    parentPort.postMessage({ id, value });
  } catch (err) {
    parentPort.postMessage({ id, error: serialise(err) });
  }
});
parentPort.postMessage({ ready: true });
