// The health recorder's report read against its own flushes: a minute being written is seen once,
// in the database or in memory, never in neither and never in both.
import { expect, it } from 'vitest';
import type { PrismaClient } from '../../server/db/client.ts';
import { HealthRecorder, type Bucket } from '../../server/routing/health.ts';

/** A database of written minutes whose writes take `writeMs` each. */
function slowDatabase(writeMs: number) {
  const rows: { requests: number; errors: number }[] = [];
  const prisma = {
    $executeRaw: async (_sql: TemplateStringsArray, ...values: unknown[]) => {
      await new Promise((r) => setTimeout(r, writeMs));
      rows.push({ requests: values[4] as number, errors: values[5] as number });
      return 1;
    },
  } as unknown as PrismaClient;
  return { prisma, rows };
}

const total = (written: { requests: number }[], pending: Bucket[]) => written.reduce((n, r) => n + r.requests, 0) + pending.reduce((n, b) => n + b.requests, 0);

it('a read while a flush is writing waits for it: every attempt counted exactly once', async () => {
  const db = slowDatabase(50);
  const health = new HealthRecorder(db.prisma, { now: () => Date.parse('2026-05-01T10:00:00Z') }, 3_600_000);
  health.record('m', 'p', false, 12, 'not_configured');
  health.record('m', 'p2', true, 30);
  const flushing = health.flush();
  // The flush has taken both minutes out of memory; neither write has landed.
  const read = await health.withPending(async () => db.rows.map((r) => ({ ...r })));
  expect(read.written).toEqual([
    { requests: 1, errors: 1 },
    { requests: 1, errors: 0 },
  ]);
  expect(read.pending).toEqual([]);
  await flushing;
  await health.close();
});

it('a flush started during a read waits for the read: what was pending is not written under it', async () => {
  const db = slowDatabase(5);
  const health = new HealthRecorder(db.prisma, { now: () => Date.parse('2026-05-01T10:00:00Z') }, 3_600_000);
  health.record('m', 'p', true, 12);
  let flushed: Promise<void> = Promise.resolve();
  const read = await health.withPending(async () => {
    flushed = health.flush();
    await new Promise((r) => setTimeout(r, 30));
    return db.rows.map((r) => ({ ...r }));
  });
  expect(total(read.written, read.pending)).toBe(1);
  expect(read.pending).toHaveLength(1);
  await flushed;
  expect(db.rows).toEqual([{ requests: 1, errors: 0 }]);
  await health.close();
});
