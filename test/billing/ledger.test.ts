// The usage ledger loses nothing when a gateway is killed between answering and writing.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openDatabase } from '../../server/db/client.ts';
import { UsageLedger, type LedgerRecord } from '../../server/billing/ledger.ts';
import { COST, EXACT_BODY, billingConfig } from '../helpers/billing-gateway.ts';
import { startFakeUpstreams, type FakeUpstreams } from '../helpers/fake-upstreams.ts';
import { freshDataDir } from '../helpers/gateway.ts';

const bin = new URL('../../bin/model-gateway.mjs', import.meta.url).pathname;
let fake: FakeUpstreams;
let dataDir: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  fake = await startFakeUpstreams();
  dataDir = freshDataDir();
  writeFileSync(path.join(dataDir, 'gateway.config.yaml'), billingConfig(fake.url, { daily_tokens: 1_000_000, requests_per_minute: 1000 }));
  env = { PATH: process.env.PATH, HOME: process.env.HOME, GATEWAY_METADATA_FETCH: 'off', DATA_DIR: dataDir, GATEWAY_CONFIG: path.join(dataDir, 'gateway.config.yaml'), HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', GATEWAY_ADMIN_TOKEN: 'mga-ledger-test-token', LEDGER_FLUSH_MS: '60000' };
});
afterAll(async () => {
  await fake?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function start(): Promise<{ child: ChildProcess; url: string }> {
  rmSync(path.join(dataDir, 'server.json'), { force: true });
  const child = spawn(process.execPath, [bin, 'serve'], { env, stdio: 'ignore' });
  const info = path.join(dataDir, 'server.json');
  for (let n = 0; n < 300 && !existsSync(info); n++) await new Promise((r) => setTimeout(r, 100));
  return { child, url: JSON.parse(readFileSync(info, 'utf8')).url };
}
const stop = (child: ChildProcess, signal: NodeJS.Signals) => new Promise<void>((r) => { child.once('exit', () => r()); child.kill(signal); });

it('records of a killed process are written by the next start', async () => {
  let { child, url } = await start();
  const h = { authorization: 'Bearer mga-ledger-test-token', 'content-type': 'application/json' };
  await fetch(`${url}/admin/v1/users`, { method: 'POST', headers: h, body: JSON.stringify({ email: 'crash@example.com' }) });
  const { key } = (await (await fetch(`${url}/admin/v1/keys`, { method: 'POST', headers: h, body: JSON.stringify({ user: 'crash@example.com' }) })).json()) as { key: string };
  const results = await Promise.all(Array.from({ length: 8 }, () => fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(EXACT_BODY) })));
  expect(results.every((r) => r.status === 200)).toBe(true);
  await new Promise((r) => setTimeout(r, 50));
  await stop(child, 'SIGKILL'); // before the 1 s batch reached the database
  rmSync(path.join(dataDir, 'db.lock'), { force: true });
  // What the killed process had not written yet is in its segment file.
  const segments = readdirSync(path.join(dataDir, 'ledger')).filter((f) => f.endsWith('.jsonl'));
  const lines = segments.flatMap((f) => readFileSync(path.join(dataDir, 'ledger', f), 'utf8').split('\n').filter(Boolean));
  expect(lines).toHaveLength(8);

  ({ child, url } = await start());
  const usage = (await (await fetch(`${url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()) as any;
  expect(usage.totals).toMatchObject({ requests: 8, billed_tokens: 8 * COST });
  await stop(child, 'SIGTERM');
}, 60_000);

it('replays segment files, skips duplicates and lines cut short by a crash', async () => {
  const db = await openDatabase({ dataDir });
  try {
    const dir = path.join(dataDir, 'ledger');
    // A duplicate is the same line written twice: one timestamp for all (a row is keyed by request id
    // and time, so records made a millisecond apart would be two rows).
    const createdAt = new Date().toISOString();
    const rec = (id: string): LedgerRecord => ({
      requestId: id, apiKeyId: 'key_x', userId: 'usr_x', oauthAppId: null, model: 'm', provider: 'p', upstreamModel: 'u', endpoint: 'chat',
      promptTokens: 1, completionTokens: 2, cachedTokens: 0, reasoningTokens: 0, surchargeTokens: 0, multiplier: 1, billedTokens: 3,
      usageSource: 'reported', status: 200, errorCode: null, latencyMs: 5, createdAt,
    });
    // pid 2147483646 is not a live process: its segment belongs to a crashed gateway.
    writeFileSync(path.join(dir, '2147483646-1-0.jsonl'), [rec('replay-1'), rec('replay-2'), rec('replay-1')].map((r) => JSON.stringify(r)).join('\n') + '\n{"requestId":"cut');
    const ledger = new UsageLedger(db.sql, dir);
    expect(await ledger.recover()).toBe(3);
    await ledger.close();
    expect(await db.prisma.usageRecord.count({ where: { requestId: { startsWith: 'replay-' } } })).toBe(2);
    expect(existsSync(path.join(dir, '2147483646-1-0.jsonl'))).toBe(false);
  } finally {
    await db.close();
  }
});

it('flush() waits for records written while an earlier flush was still inserting', async () => {
  const dir = path.join(dataDir, 'ledger-flush');
  const inserted: string[][] = [];
  let release!: () => void;
  const firstInsert = new Promise<void>((r) => (release = r));
  // A database whose first insert hangs until released: the second record arrives meanwhile.
  const sql = {
    exec: async () => {},
    query: async (_text: string, params: unknown[] = []) => {
      if (!inserted.length) await firstInsert;
      inserted.push(params[0] as string[]);
      return [];
    },
  };
  const rec = (id: string): LedgerRecord => ({
    requestId: id, apiKeyId: 'key_x', userId: 'usr_x', oauthAppId: null, model: 'm', provider: 'p', upstreamModel: 'u', endpoint: 'chat',
    promptTokens: 1, completionTokens: 2, cachedTokens: 0, reasoningTokens: 0, surchargeTokens: 0, multiplier: 1, billedTokens: 3,
    usageSource: 'reported', status: 200, errorCode: null, latencyMs: 5, createdAt: new Date().toISOString(),
  });
  const ledger = new UsageLedger(sql, dir, { flushMs: 60_000 });
  ledger.write(rec('first'));
  const under = ledger.flush();
  await new Promise((r) => setTimeout(r, 20));
  ledger.write(rec('second'));
  const mine = ledger.flush();
  release();
  await under;
  await mine;
  expect(inserted.flat()).toEqual(['first', 'second']);
  await ledger.close();
});

it('the embedded bulk load keeps every value exactly and falls back to skipping duplicates', async () => {
  const db = await openDatabase({ dataDir });
  try {
    expect(db.sql.copyCsv).toBeTypeOf('function');
    const dir = path.join(dataDir, 'ledger-copy');
    const rec = (id: string, over: Partial<LedgerRecord> = {}): LedgerRecord => ({
      requestId: id, apiKeyId: 'key_x', userId: 'usr_x', oauthAppId: null, model: 'm', provider: 'p', upstreamModel: 'u', endpoint: 'chat',
      promptTokens: 1, completionTokens: 2, cachedTokens: 0, reasoningTokens: 0, surchargeTokens: 0, multiplier: 1.25, billedTokens: 4,
      usageSource: 'reported', status: 200, errorCode: null, latencyMs: null, createdAt: '2026-11-22T10:11:12.345Z', ...over,
    });
    const copies: string[] = [];
    const sql = {
      ...db.sql,
      copyCsv: (table: string, columns: string[], csv: string) =>
        db.sql.copyCsv!(table, columns, csv).then(
          () => void copies.push('loaded'),
          (err) => {
            copies.push('refused');
            throw err;
          },
        ),
    };
    const ledger = new UsageLedger(sql, dir, { flushMs: 60_000 });
    // A client-chosen request id and an upstream model name can hold anything CSV treats specially.
    ledger.write(rec('copy-1,"quoted"\nnext line', { upstreamModel: '', errorCode: 'a,b', provider: null }));
    ledger.write(rec('copy-2', { billedTokens: 2 ** 40, multiplier: 0.1 }));
    await ledger.flush();
    // A batch holding a record already written (a retried batch) still lands, without a duplicate.
    ledger.write(rec('copy-2'));
    ledger.write(rec('copy-3'));
    await ledger.flush();
    await ledger.close();
    expect(copies).toEqual(['loaded', 'refused']);
    const rows = await db.prisma.usageRecord.findMany({ where: { requestId: { startsWith: 'copy-' } }, orderBy: { requestId: 'asc' } });
    expect(rows.map((r) => r.requestId)).toEqual(['copy-1,"quoted"\nnext line', 'copy-2', 'copy-3']);
    expect(rows[0]).toMatchObject({ upstreamModel: '', errorCode: 'a,b', provider: null, oauthAppId: null, latencyMs: null, multiplier: 1.25, createdAt: new Date('2026-11-22T10:11:12.345Z') });
    expect(rows[1]).toMatchObject({ billedTokens: 2n ** 40n, multiplier: 0.1 });
  } finally {
    await db.close();
  }
});

it('a database outage: records wait (past maxPending on disk only), writes back off, and all land once it answers', async () => {
  const dir = path.join(dataDir, 'ledger-outage');
  const rows = new Set<string>();
  let attempts = 0;
  let down = true;
  // PostgreSQL refusing connections, then back; the INSERT skips rows already there, as the real one does.
  const sql = {
    exec: async () => {},
    query: async (_text: string, params: unknown[] = []) => {
      attempts++;
      if (down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      for (const id of params[0] as string[]) rows.add(id);
      return [];
    },
  };
  const rec = (id: string): LedgerRecord => ({
    requestId: id, apiKeyId: 'key_x', userId: 'usr_x', oauthAppId: null, model: 'm', provider: 'p', upstreamModel: 'u', endpoint: 'chat',
    promptTokens: 1, completionTokens: 2, cachedTokens: 0, reasoningTokens: 0, surchargeTokens: 0, multiplier: 1, billedTokens: 3,
    usageSource: 'reported', status: 200, errorCode: null, latencyMs: 5, createdAt: new Date().toISOString(),
  });
  const errors: { pending: number; retryInMs: number }[] = [];
  const ledger = new UsageLedger(sql, dir, { flushMs: 50, maxPending: 3, onError: (_err, state) => errors.push(state) });
  for (let i = 0; i < 8; i++) ledger.write(rec(`outage-${i}`));
  await new Promise((r) => setTimeout(r, 20)); // appended to the segment file
  await new Promise((r) => setTimeout(r, 700));
  // Backoff: 50, 100, 200, 400 ms between attempts, not one every 50 ms.
  expect(attempts).toBeGreaterThanOrEqual(2);
  expect(attempts).toBeLessThanOrEqual(5);
  expect(errors.at(-1)!.retryInMs).toBeGreaterThan(50);
  expect(ledger.databaseUnavailable).toBe(true);
  expect(ledger.backlog).toEqual({ pending: 3, spilledSegments: 1 });
  down = false;
  await ledger.flush();
  expect([...rows].sort()).toEqual(Array.from({ length: 8 }, (_, i) => `outage-${i}`));
  expect(ledger.databaseUnavailable).toBe(false);
  expect(ledger.backlog).toEqual({ pending: 0, spilledSegments: 0 });
  await ledger.close();
  expect(readdirSync(dir).filter((f) => f.endsWith('.jsonl'))).toEqual([]);
});

// Issue 42: one bad record never stops the others, and no stored record stops a start.
const record = (id: string, over: Partial<LedgerRecord> = {}): LedgerRecord => ({
  requestId: id, apiKeyId: 'key_i42', userId: 'usr_i42', oauthAppId: null, model: 'm', provider: 'p', upstreamModel: 'u', endpoint: 'chat',
  promptTokens: 1, completionTokens: 2, cachedTokens: 0, reasoningTokens: 0, surchargeTokens: 0, multiplier: 1, billedTokens: 3,
  usageSource: 'reported', status: 200, errorCode: null, latencyMs: 5, createdAt: '2026-11-28T10:00:00.000Z', ...over,
});

it('a record the database refuses is set aside; the rest of its batch is written', async () => {
  const db = await openDatabase({ dataDir });
  try {
    const dir = path.join(dataDir, 'ledger-reject');
    const rejected: { file: string; record: unknown }[] = [];
    const ledger = new UsageLedger(db.sql, dir, { flushMs: 60_000, onRejected: (record, _err, file) => rejected.push({ record, file }) });
    ledger.write(record('iso-1'));
    // More tokens than an integer column holds: only a broken upstream reports that, and only its record goes.
    ledger.write(record('iso-2', { promptTokens: 3_000_000_000 }));
    // A NUL and a lone surrogate in an upstream's model name, and a request id far past any index's row: made storable.
    ledger.write(record(`iso-3-${'x'.repeat(4000)}`, { upstreamModel: 'bad\u0000name\ud800' }));
    ledger.write(record('iso-4'));
    await ledger.flush();
    await ledger.close();
    const rows = await db.prisma.usageRecord.findMany({ where: { requestId: { startsWith: 'iso-' } }, orderBy: { requestId: 'asc' } });
    expect(rows.map((r) => r.requestId.slice(0, 8))).toEqual(['iso-1', 'iso-3-xx', 'iso-4']);
    expect(rows[1]!.requestId.length).toBe(128);
    expect(rows[1]!.upstreamModel).toBe('bad\uFFFDname\uFFFD');
    expect(rejected).toHaveLength(1);
    expect((rejected[0]!.record as LedgerRecord).requestId).toBe('iso-2');
    expect(readFileSync(rejected[0]!.file, 'utf8').trim().split('\n').map((l) => JSON.parse(l).requestId)).toEqual(['iso-2']);
    expect(await db.prisma.usageDaily.findFirst({ where: { apiKeyId: 'key_i42', day: new Date('2026-11-28') } })).toMatchObject({ requests: 3, promptTokens: 3n });
  } finally {
    await db.close();
  }
});

it('replaying a previous process’s segments never fails: bad lines and unreadable segments are set aside, and said where', async () => {
  const db = await openDatabase({ dataDir });
  try {
    const dir = path.join(dataDir, 'ledger-replay-bad');
    mkdirSync(dir, { recursive: true });
    const lines = [
      JSON.stringify(record(`long-${'r'.repeat(4000)}`)), // what a 4,000-letter X-Request-Id left before issue 42
      JSON.stringify(record('rp42-ok')),
      JSON.stringify(record('rp42-overflow', { completionTokens: 2 ** 40 })),
      '42',
      '{"requestId":"no-other-field"}',
    ];
    writeFileSync(path.join(dir, '2147483646-2-0.jsonl'), lines.join('\n') + '\n');
    // A "segment" that cannot be read as a file at all.
    mkdirSync(path.join(dir, '2147483646-3-0.jsonl'));
    const errors: string[] = [];
    const rejected: string[] = [];
    const ledger = new UsageLedger(db.sql, dir, { flushMs: 60_000, onError: (err) => errors.push(String(err)), onRejected: (_r, _e, file) => rejected.push(file) });
    expect(await ledger.recover()).toBe(5);
    await ledger.close();
    const rows = await db.prisma.usageRecord.findMany({ where: { OR: [{ requestId: { startsWith: 'long-' } }, { requestId: { startsWith: 'rp42-' } }] }, orderBy: { requestId: 'asc' } });
    expect(rows.map((r) => r.requestId.slice(0, 9))).toEqual(['long-rrrr', 'rp42-ok']);
    expect(rejected).toHaveLength(3);
    const setAside = readdirSync(path.join(dir, 'rejected')).sort();
    expect(setAside).toContain('2147483646-3-0.jsonl');
    expect(errors.some((e) => e.includes('could not be read and was moved to'))).toBe(true);
    expect(readdirSync(dir).filter((f) => f.endsWith('.jsonl'))).toEqual([]);
  } finally {
    await db.close();
  }
});

it('a gateway whose DATA_DIR holds such a segment starts, and writes what it can (issue 42)', async () => {
  const dir = path.join(dataDir, 'ledger');
  mkdirSync(dir, { recursive: true });
  const createdAt = new Date().toISOString();
  writeFileSync(path.join(dir, '2147483646-4-0.jsonl'), [JSON.stringify(record(`restart-${'z'.repeat(4000)}`, { createdAt })), JSON.stringify(record('restart-bad', { createdAt, promptTokens: 2 ** 33 }))].join('\n') + '\n');
  rmSync(path.join(dataDir, 'db.lock'), { force: true });
  const { child, url } = await start();
  try {
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
  } finally {
    await stop(child, 'SIGTERM');
  }
  const db = await openDatabase({ dataDir });
  try {
    expect(await db.prisma.usageRecord.count({ where: { requestId: { startsWith: 'restart-zzz' } } })).toBe(1);
    expect(readdirSync(path.join(dir, 'rejected')).length).toBeGreaterThan(0);
  } finally {
    await db.close();
  }
}, 60_000);

it('a segment naming this process’s pid with another start is an earlier run’s (a container restarts with the same pid): replayed', async () => {
  const db = await openDatabase({ dataDir });
  try {
    const dir = path.join(dataDir, 'ledger-same-pid');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `${process.pid}-1-0.jsonl`), JSON.stringify(record('same-pid-1')) + '\n');
    const ledger = new UsageLedger(db.sql, dir, { flushMs: 60_000 });
    expect(await ledger.recover()).toBe(1);
    await ledger.close();
    expect(await db.prisma.usageRecord.count({ where: { requestId: 'same-pid-1' } })).toBe(1);
    expect(readdirSync(dir).filter((f) => f.endsWith('.jsonl'))).toEqual([]);
  } finally {
    await db.close();
  }
});
