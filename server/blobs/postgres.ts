// Blobs in PostgreSQL: the store every instance of a DATABASE_URL deployment shares without
// anything else to set up (decision 0020). Bytes go in and out in chunks of 1 MiB (one row each),
// so neither an upload nor a download is ever held whole in memory.
//
// A blob is written under a fresh version id (registered in blob_writes while it is written), then
// named by its `blobs` row in one transaction: a reader finds either the previous complete blob or
// the new complete one, never a part. Replacing or deleting a blob removes its chunks; a write
// whose process died leaves a blob_writes row that `sweep` finds and removes with its chunks.
//
// The store has a small pool of its own: a 25 MB upload trickling in from a slow client borrows a
// connection per chunk and must not make the request path's queries wait for one.
import type pg from 'pg';
import { Readable } from 'node:stream';
import { randomToken } from '../runtime/secrets.ts';
import { checkKey, type BlobInfo, type BlobStore } from './store.ts';

/** Bytes per chunk row: large enough that a 25 MB upload is 25 inserts, small enough to hold one at a time. */
export const CHUNK_BYTES = 1024 * 1024;

/** Connections of the store's own pool, besides DATABASE_POOL_SIZE. */
export const BLOB_POOL_SIZE = 4;

/** A write that has not stored a chunk for this long is taken as abandoned (its process died) and removed. */
export const ABANDONED_WRITE_MS = 60 * 60_000;

export type PostgresBlobOptions = { connectMs: number; queryMs: number; abandonedAfterMs?: number };

/** Regroups a stream's chunks (whatever their sizes) into Buffers of `size` bytes, the last one shorter. */
async function* rechunked(body: AsyncIterable<Buffer | string>, size: number): AsyncGenerator<Buffer> {
  let parts: Buffer[] = [];
  let held = 0;
  for await (const raw of body) {
    let chunk = typeof raw === 'string' ? Buffer.from(raw) : raw;
    while (held + chunk.length >= size) {
      const take = size - held;
      parts.push(chunk.subarray(0, take));
      yield Buffer.concat(parts, size);
      chunk = chunk.subarray(take);
      parts = [];
      held = 0;
    }
    if (chunk.length) {
      parts.push(chunk);
      held += chunk.length;
    }
  }
  if (held) yield Buffer.concat(parts, held);
}

export class PostgresBlobStore implements BlobStore {
  readonly kind = 'postgresql' as const;
  private readonly abandonedAfterMs: number;

  private constructor(
    private readonly pool: pg.Pool,
    opts: PostgresBlobOptions,
  ) {
    this.abandonedAfterMs = opts.abandonedAfterMs ?? ABANDONED_WRITE_MS;
  }

  /** A pool of BLOB_POOL_SIZE connections to `databaseUrl`, with the database's time limits. */
  static async open(databaseUrl: string, opts: PostgresBlobOptions): Promise<PostgresBlobStore> {
    const { default: pgModule } = await import('pg');
    const pool = new pgModule.Pool({
      connectionString: databaseUrl,
      max: BLOB_POOL_SIZE,
      connectionTimeoutMillis: opts.connectMs,
      query_timeout: opts.queryMs,
      statement_timeout: opts.queryMs,
      keepAlive: true,
    });
    // An idle connection the server dropped must not crash the process: the next query reports it.
    pool.on('error', () => {});
    return new PostgresBlobStore(pool, opts);
  }

  async put(key: string, body: Readable, contentType: string): Promise<BlobInfo> {
    checkKey(key);
    // The body's error is seen by the loop below through the stream's state (an async iterator
    // rethrows it); the listener keeps one raised before the loop starts from going unhandled.
    body.on('error', () => {});
    const version = randomToken(24);
    // Until the write is registered nothing reads the body: a failure here must still end it.
    try {
      await this.pool.query('INSERT INTO blob_writes (version) VALUES ($1)', [version]);
    } catch (err) {
      body.destroy();
      throw err;
    }
    let size = 0;
    try {
      let seq = 0;
      for await (const chunk of rechunked(body, CHUNK_BYTES)) {
        // The chunk and the write's heartbeat together: the sweep never takes a live write for dead.
        await this.pool.query(
          'WITH c AS (INSERT INTO blob_chunks (version, seq, data) VALUES ($1, $2, $3)) UPDATE blob_writes SET touched_at = now() WHERE version = $1',
          [version, seq++, chunk],
        );
        size += chunk.length;
      }
      await this.publish(key, version, size, contentType);
    } catch (err) {
      body.destroy();
      await this.discard(version).catch(() => {});
      throw err;
    }
    return { size, contentType };
  }

  /** Names the written version as `key`'s blob and removes the version it replaces, in one transaction. */
  private async publish(key: string, version: string, size: number, contentType: string): Promise<void> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      // The write must still be registered: if a sweep took it for abandoned, its chunks are gone.
      const write = await client.query('DELETE FROM blob_writes WHERE version = $1', [version]);
      if (write.rowCount !== 1) throw new Error(`blob ${key}: the write was abandoned before it completed (no chunk stored for ${this.abandonedAfterMs / 60_000} minutes)`);
      const inserted = await client.query('INSERT INTO blobs (key, version, size, content_type) VALUES ($1, $2, $3, $4) ON CONFLICT (key) DO NOTHING', [key, version, size, contentType]);
      if (inserted.rowCount === 0) {
        // Replacing: the row is locked, so a concurrent replacement waits and then replaces this one.
        const old = await client.query<{ version: string }>('SELECT version FROM blobs WHERE key = $1 FOR UPDATE', [key]);
        await client.query('UPDATE blobs SET version = $2, size = $3, content_type = $4, created_at = now() WHERE key = $1', [key, version, size, contentType]);
        if (old.rows[0]) await client.query('DELETE FROM blob_chunks WHERE version = $1', [old.rows[0].version]);
        // A row deleted between the insert and the lock: nothing replaced, the update found none.
        else await client.query('INSERT INTO blobs (key, version, size, content_type) VALUES ($1, $2, $3, $4)', [key, version, size, contentType]);
      }
      await client.query('COMMIT');
    } catch (err) {
      broken = err as Error;
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      // A connection that failed mid-transaction is closed rather than handed to the next caller.
      client.release(broken);
    }
  }

  /** Removes a failed write's chunks. */
  private async discard(version: string): Promise<void> {
    await this.pool.query('WITH w AS (DELETE FROM blob_writes WHERE version = $1) DELETE FROM blob_chunks WHERE version = $1', [version]);
  }

  async stat(key: string): Promise<BlobInfo | null> {
    const { rows } = await this.pool.query<{ size: string; content_type: string }>('SELECT size, content_type FROM blobs WHERE key = $1', [checkKey(key)]);
    return rows[0] ? { size: Number(rows[0].size), contentType: rows[0].content_type } : null;
  }

  async get(key: string): Promise<(BlobInfo & { body: Readable }) | null> {
    const { rows } = await this.pool.query<{ version: string; size: string; content_type: string }>('SELECT version, size, content_type FROM blobs WHERE key = $1', [checkKey(key)]);
    const row = rows[0];
    if (!row) return null;
    const size = Number(row.size);
    return { size, contentType: row.content_type, body: this.chunks(key, row.version, size) };
  }

  /**
   * The version's chunks in order, one query each when the reader wants more: a slow download
   * holds one chunk and no connection. A chunk missing part-way (the blob was replaced or deleted
   * meanwhile) ends the stream with an error, never with a short body taken for the whole.
   */
  private chunks(key: string, version: string, size: number): Readable {
    let seq = 0;
    let sent = 0;
    const pool = this.pool;
    return new Readable({
      highWaterMark: CHUNK_BYTES,
      read() {
        if (sent >= size) return void this.push(null);
        pool.query<{ data: Buffer }>('SELECT data FROM blob_chunks WHERE version = $1 AND seq = $2', [version, seq]).then(
          ({ rows }) => {
            if (this.destroyed) return;
            const data = rows[0]?.data;
            if (!data) return void this.destroy(new Error(`blob ${key} was replaced or deleted while it was read (${sent} of ${size} bytes sent)`));
            seq++;
            sent += data.length;
            this.push(data);
            if (sent >= size) this.push(null);
          },
          (err: Error) => this.destroy(err),
        );
      },
    });
  }

  async delete(key: string): Promise<void> {
    // One statement: the row and its chunks go together.
    await this.pool.query('WITH b AS (DELETE FROM blobs WHERE key = $1 RETURNING version) DELETE FROM blob_chunks WHERE version IN (SELECT version FROM b)', [checkKey(key)]);
  }

  /** Removes writes abandoned by a process that died mid-way (up to 100 a call), with their chunks; resolves with how many. */
  async sweep(): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>(
      `WITH dead AS (
         DELETE FROM blob_writes WHERE version IN (
           SELECT version FROM blob_writes WHERE touched_at < now() - make_interval(secs => $1) ORDER BY touched_at LIMIT 100 FOR UPDATE SKIP LOCKED)
         RETURNING version),
       gone AS (DELETE FROM blob_chunks WHERE version IN (SELECT version FROM dead))
       SELECT count(*) AS n FROM dead`,
      [this.abandonedAfterMs / 1000],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
