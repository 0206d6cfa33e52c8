// With Redis configured, BullMQ carries "job X is due" to the instances' workers: a submission
// or a delayed re-check runs within milliseconds on whichever instance is free, with BullMQ's
// retries (exponential backoff when the database cannot be reached) and stalled-job recovery.
// The database row stays the truth: a worker claims the row's lease before running, so a
// message delivered twice runs the job once, and the runner's slow database poll still finds a
// job whose message was lost.
import type { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';

export interface JobQueue {
  readonly kind: 'database' | 'bullmq';
  /** Job `id` is due now, or in `delayMs`. */
  notify(id: string, delayMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** Embedded mode: the runner's poll of the database is the queue. */
export const databaseQueue: JobQueue = { kind: 'database', notify: async () => {}, close: async () => {} };

export class BullQueue implements JobQueue {
  readonly kind = 'bullmq' as const;
  private constructor(
    private readonly queue: Queue,
    private readonly worker: Worker,
    private readonly connections: Redis[],
  ) {}

  /** `run(id)` claims and runs the job (resolving when it ends or waits for a re-check); it throws only to be retried. */
  static async open(redisUrl: string, prefix: string, concurrency: number, run: (id: string) => Promise<void>): Promise<BullQueue> {
    const [{ Queue, Worker }, { Redis }] = await Promise.all([import('bullmq'), import('ioredis')]);
    // BullMQ's blocking worker connection must retry forever rather than fail a command.
    const connect = () => new Redis(redisUrl, { maxRetriesPerRequest: null, lazyConnect: false });
    const queueConn = connect();
    const workerConn = connect();
    const opts = { prefix: `${prefix}bull` };
    const queue = new Queue('jobs', { ...opts, connection: queueConn });
    const worker = new Worker('jobs', async (job) => run((job.data as { id: string }).id), { ...opts, connection: workerConn, concurrency, autorun: true });
    worker.on('error', () => {}); // connection trouble: BullMQ reconnects; the database poll covers the gap
    return new BullQueue(queue, worker, [queueConn, workerConn]);
  }

  async notify(id: string, delayMs = 0): Promise<void> {
    await this.queue.add('run', { id }, { delay: delayMs, attempts: 5, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: 1000, removeOnFail: 1000 });
  }

  async close(): Promise<void> {
    await this.worker.close();
    await this.queue.close();
    for (const c of this.connections) c.disconnect();
  }
}
