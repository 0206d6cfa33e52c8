// Budget alerts: a crossed threshold is recorded once per budget and period across instances (on
// the embedded database and on PostgreSQL), posted to the operator's webhook with the documented
// body and signature, retried with growing gaps (by any instance) until answered or given up, and
// recorded without a webhook for the usage reports.
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../server/db/client.ts';
import { BudgetAlertsConfig } from '../../server/config/schema.ts';
import { ConfigError, parseConfig } from '../../server/boot/config.ts';
import { BudgetAlerts, type BudgetAlertsOptions, type BudgetObservation } from '../../server/billing/budget-alerts.ts';
import { crossedThresholds } from '../../server/billing/budget-alerts/thresholds.ts';
import { verifyBudgetAlertSignature } from '../../server/billing/budget-alerts/signing.ts';
import { nanoToUsd } from '../../server/billing/prices.ts';
import { freshDataDir, freshPostgres, minimalConfig, startTestGateway } from '../helpers/gateway.ts';

const USD = 1_000_000_000;
const SECRET = 'whsec_0123456789abcdef0123456789abcdef';

type Received = { headers: IncomingHttpHeaders; body: string; at: number; path: string };
type Receiver = { url: string; received: Received[]; answer: (n: number) => number | 'hang'; close(): Promise<void> };

/** A webhook receiver on 127.0.0.1: `answer(n)` gives the status of the n-th request (from 1), or leaves it hanging. */
async function startReceiver(answer: (n: number) => number | 'hang' = () => 200): Promise<Receiver> {
  const received: Received[] = [];
  const hanging: (() => void)[] = [];
  const r: Receiver = { url: '', received, answer, close: async () => {} };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now(), path: req.url ?? '' });
      const status = r.answer(received.length);
      if (status === 'hang') hanging.push(() => res.destroy());
      else res.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/budget-PATHSECRET?token=QUERYSECRET`;
  r.close = () => {
    for (const h of hanging) h();
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  };
  return r;
}

async function until(check: () => boolean | Promise<boolean>, ms = 10_000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

const alertsConfig = (input: Record<string, unknown> = {}) => BudgetAlertsConfig.parse(input);

/** A crossing of the 50 % threshold of a $10 daily key budget: $4.50 → $5.50. */
const crossing = (over: Partial<BudgetObservation> = {}): BudgetObservation => ({
  scope: 'key',
  userId: 'usr_a',
  keyId: 'key_a',
  period: 'daily',
  periodStart: '2026-11-27',
  limitNano: 10 * USD,
  beforeNano: 4.5 * USD,
  afterNano: 5.5 * USD,
  at: Date.parse('2026-11-27T19:30:00.123Z'),
  ...over,
});

it('a threshold is crossed when before < t% × limit ≤ after, several at once, exactly in nano-dollars', () => {
  expect(crossedThresholds([50, 80, 100], 10 * USD, 4.5 * USD, 5.5 * USD)).toEqual([50]);
  expect(crossedThresholds([50, 80, 100], 10 * USD, 0, 12 * USD)).toEqual([50, 80, 100]);
  // Reaching the threshold exactly crosses it; starting on it does not cross it again.
  expect(crossedThresholds([50], 10 * USD, 5 * USD - 1, 5 * USD)).toEqual([50]);
  expect(crossedThresholds([50], 10 * USD, 5 * USD, 6 * USD)).toEqual([]);
  // Past 100 % too, and for limits whose products exceed 2^53.
  expect(crossedThresholds([100, 150], 1_000_000 * USD, 999_999 * USD, 1_500_000 * USD)).toEqual([100, 150]);
  expect(crossedThresholds([50], 1e6 * USD, 5e5 * USD - 1, 5e5 * USD)).toEqual([50]);
  expect(crossedThresholds([50], 1e6 * USD, 5e5 * USD, 5e5 * USD + 1)).toEqual([]);
  // No budget, no spend, a refund, nonsense: nothing.
  expect(crossedThresholds([50], 0, 0, 5 * USD)).toEqual([]);
  expect(crossedThresholds([50], 10 * USD, 6 * USD, 4 * USD)).toEqual([]);
  expect(crossedThresholds([50], Number.NaN, 0, 6 * USD)).toEqual([]);
});

it('nano-dollars are written as exact decimal US dollars', () => {
  expect(nanoToUsd(12_500_000_000)).toBe('12.5');
  expect(nanoToUsd('10000000000')).toBe('10');
  expect(nanoToUsd(1)).toBe('0.000000001');
  expect(nanoToUsd(0)).toBe('0');
  expect(nanoToUsd(123_456_789_012_345_678n)).toBe('123456789.012345678');
});

it('config: thresholds default to 50/80/100, sorted and unique; a webhook needs a secret', () => {
  expect(parseConfig('providers: []\n', 'gw.yaml', {}).budgetAlerts).toEqual({ thresholds: [50, 80, 100], max_attempts: 10 });
  expect(parseConfig('budget_alerts: { thresholds: [100, 25, 75] }\n', 'gw.yaml', {}).budgetAlerts.thresholds).toEqual([25, 75, 100]);
  const problems = (text: string) => {
    try {
      parseConfig(text, 'gw.yaml', {});
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as ConfigError).problems;
    }
    throw new Error('expected a ConfigError');
  };
  expect(problems('budget_alerts: { thresholds: [50, 50] }\n')).toEqual([expect.stringMatching(/^gw\.yaml:1:\d+ budget_alerts\.thresholds: each threshold once$/)]);
  expect(problems('budget_alerts: { thresholds: [0, 1001] }\n')).toHaveLength(2);
  expect(problems('budget_alerts:\n  webhook_url: https://ops.example/hook\n')).toEqual([
    'gw.yaml:2:3 budget_alerts.secret: required when webhook_url is set: every delivery is signed with it',
  ]);
  expect(problems('budget_alerts: { webhook_url: "https://ops.example/hook", secret: short }\n')).toEqual([expect.stringMatching(/budget_alerts\.secret: at least 16 characters/)]);
  expect(problems('budget_alerts: { webhook_url: "ftp://ops.example/hook", secret: 0123456789abcdef }\n')).toEqual([expect.stringMatching(/budget_alerts\.webhook_url: /)]);
  expect(parseConfig('budget_alerts: { webhook_url: "${HOOK:-}", secret: "${HOOK_SECRET:-}" }\n', 'gw.yaml', {}).budgetAlerts.webhook_url).toBeUndefined();
});

it('a receiver verifies the signature (constant time, within its tolerance) and refuses anything else', () => {
  const body = '{"type":"budget.threshold_crossed","id":"bal_1"}';
  const t = Math.floor(Date.now() / 1000);
  const header = `t=${t},v1=${createHmac('sha256', SECRET).update(`${t}.${body}`).digest('hex')}`;
  expect(verifyBudgetAlertSignature(SECRET, header, body)).toBe(true);
  expect(verifyBudgetAlertSignature(SECRET, header, body + ' ')).toBe(false);
  expect(verifyBudgetAlertSignature('another secret of enough length', header, body)).toBe(false);
  expect(verifyBudgetAlertSignature(SECRET, header, body, t + 301)).toBe(false);
  expect(verifyBudgetAlertSignature(SECRET, undefined, body)).toBe(false);
  expect(verifyBudgetAlertSignature(SECRET, `t=${t},v1=zz`, body)).toBe(false);
});

function suite(kind: 'embedded' | 'postgresql') {
  let db: Database;
  let cleanupDb: () => Promise<void>;
  const instances: BudgetAlerts[] = [];
  const receivers: Receiver[] = [];
  const logs: string[] = [];

  beforeAll(async () => {
    if (kind === 'embedded') {
      const dir = freshDataDir();
      db = await openDatabase({ dataDir: dir });
      cleanupDb = async () => {
        await db.close();
        rmSync(dir, { recursive: true, force: true });
      };
    } else {
      const pg = await freshPostgres();
      db = await openDatabase({ databaseUrl: pg.url, dataDir: '/nonexistent' });
      cleanupDb = async () => {
        await db.close();
        await pg.drop();
      };
    }
  });
  afterAll(async () => {
    await cleanupDb?.();
  });
  beforeEach(async () => {
    await db.sql.query('DELETE FROM budget_alerts');
    logs.length = 0;
  });
  afterEach(async () => {
    await Promise.all(instances.splice(0).map((a) => a.close(100)));
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });

  const receiver = async (answer?: (n: number) => number | 'hang') => {
    const r = await startReceiver(answer);
    receivers.push(r);
    return r;
  };
  const log = (level: string) => (msg: string, extra?: Record<string, unknown>) => logs.push(`${level} ${msg} ${JSON.stringify(extra ?? {})}`);
  const alerts = (config: Record<string, unknown>, opts: BudgetAlertsOptions = {}, sql = db.sql) => {
    const a = new BudgetAlerts(sql, alertsConfig(config), { log: { info: log('info'), warn: log('warn'), error: log('error') }, ...opts });
    instances.push(a);
    a.start();
    return a;
  };
  const rows = () => db.sql.query(`SELECT id, delivery, attempts, last_error, claimed_until FROM budget_alerts ORDER BY threshold_percent`);

  it('posts a crossed threshold once, with the documented body, headers and a signature that verifies', async () => {
    const hook = await receiver();
    const a = alerts({ webhook_url: hook.url, secret: SECRET });
    const c = crossing();
    a.observe(c);
    await until(() => hook.received.length === 1, 10_000, 'the delivery');
    // Once: the same crossing seen again (a retried settlement, another counter read) adds nothing.
    a.observe(c);
    a.observe({ ...c, beforeNano: 4.9 * USD, afterNano: 5.2 * USD, at: c.at + 1000 });
    await until(async () => (await a.list({})).every((x) => x.delivery === 'delivered'), 10_000, 'delivered');
    await sleep(300);
    expect(hook.received).toHaveLength(1);

    const [listed] = await a.list({ userId: 'usr_a' });
    expect(listed).toEqual({
      id: expect.stringMatching(/^bal_/),
      scope: 'key',
      key_id: 'key_a',
      user_id: 'usr_a',
      period: 'daily',
      period_start: '2026-11-27',
      threshold_percent: 50,
      limit_usd: '10',
      spent_usd: '5.5',
      created_at: '2026-11-27T19:30:00.123Z',
      delivery: 'delivered',
      attempts: 1,
      delivered_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });

    const got = hook.received[0]!;
    expect(got.path).toBe('/hooks/budget-PATHSECRET?token=QUERYSECRET');
    expect(JSON.parse(got.body)).toEqual({
      type: 'budget.threshold_crossed',
      id: listed!.id,
      scope: 'key',
      user_id: 'usr_a',
      key_id: 'key_a',
      period: 'daily',
      period_start: '2026-11-27',
      threshold_percent: 50,
      limit_usd: '10',
      spent_usd: '5.5',
      created_at: '2026-11-27T19:30:00.123Z',
    });
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['x-gateway-event']).toBe('budget.threshold_crossed');
    expect(got.headers['x-gateway-delivery']).toBe(listed!.id);
    // Stripe's scheme, recomputed here from the raw body: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">.
    const signature = String(got.headers['x-gateway-signature']);
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(signature)!;
    expect(Math.abs(Number(t) - got.at / 1000)).toBeLessThan(5);
    expect(v1).toBe(createHmac('sha256', SECRET).update(`${t}.${got.body}`).digest('hex'));
    expect(verifyBudgetAlertSignature(SECRET, signature, got.body)).toBe(true);
  });

  it('two instances sharing the database post one alert once, however many times they see it', async () => {
    const hook = await receiver();
    const a = alerts({ webhook_url: hook.url, secret: SECRET });
    const b = alerts({ webhook_url: hook.url, secret: SECRET });
    const c = crossing({ scope: 'user', keyId: 'key_b', period: 'monthly', periodStart: '2026-11', limitNano: 100 * USD, beforeNano: 79 * USD, afterNano: 81 * USD });
    for (let i = 0; i < 5; i++) {
      a.observe(c);
      b.observe(c);
    }
    await until(() => hook.received.length >= 1, 10_000, 'the delivery');
    await sleep(500);
    expect(hook.received).toHaveLength(1);
    expect(JSON.parse(hook.received[0]!.body)).toMatchObject({ scope: 'user', user_id: 'usr_a', key_id: 'key_b', period: 'monthly', period_start: '2026-11', threshold_percent: 80, limit_usd: '100', spent_usd: '81' });
    expect(await b.list({})).toHaveLength(1);
    // Another period, or the key's own budget of the same user, is another alert.
    a.observe({ ...c, periodStart: '2026-12' });
    b.observe({ ...c, scope: 'key' });
    await until(() => hook.received.length === 3, 10_000, 'two more deliveries');
    expect(await a.list({})).toHaveLength(3);
  });

  it('several thresholds crossed at once are several alerts', async () => {
    const hook = await receiver();
    const a = alerts({ webhook_url: hook.url, secret: SECRET });
    a.observe(crossing({ beforeNano: 1 * USD, afterNano: 10.25 * USD }));
    await until(() => hook.received.length === 3, 10_000, 'three deliveries');
    const bodies = hook.received.map((r) => JSON.parse(r.body));
    expect(bodies.map((b) => b.threshold_percent).sort((x: number, y: number) => x - y)).toEqual([50, 80, 100]);
    expect(new Set(bodies.map((b) => b.id)).size).toBe(3);
    expect(bodies.every((b) => b.spent_usd === '10.25' && b.limit_usd === '10')).toBe(true);
    expect((await a.list({})).map((x) => x.threshold_percent).sort()).toEqual([100, 50, 80]);
  });

  it('a receiver that fails twice then answers gets three attempts with growing gaps, each the same alert', async () => {
    const hook = await receiver((n) => (n <= 2 ? 500 : 200));
    const a = alerts({ webhook_url: hook.url, secret: SECRET }, { backoffMs: 150 });
    a.observe(crossing());
    await until(() => hook.received.length === 3, 10_000, 'three attempts');
    await until(async () => (await rows())[0]?.delivery === 'delivered', 5_000, 'delivered');
    const [first, second, third] = hook.received;
    const gap1 = second!.at - first!.at;
    const gap2 = third!.at - second!.at;
    expect(gap1).toBeGreaterThanOrEqual(140);
    expect(gap2).toBeGreaterThanOrEqual(290);
    expect(gap2).toBeGreaterThan(gap1);
    expect(new Set(hook.received.map((r) => r.headers['x-gateway-delivery'])).size).toBe(1);
    expect(new Set(hook.received.map((r) => r.body)).size).toBe(1);
    expect(hook.received.every((r) => verifyBudgetAlertSignature(SECRET, String(r.headers['x-gateway-signature']), r.body))).toBe(true);
    expect(await rows()).toEqual([expect.objectContaining({ delivery: 'delivered', attempts: 3, last_error: null, claimed_until: null })]);
    await sleep(400);
    expect(hook.received).toHaveLength(3);
  });

  it('a dead receiver: failed after max_attempts, and neither the URL nor the secret reaches the logs or the stored error', async () => {
    const dead = await receiver();
    const url = dead.url;
    await dead.close();
    receivers.pop();
    const a = alerts({ webhook_url: url, secret: SECRET, max_attempts: 3 }, { backoffMs: 30 });
    a.observe(crossing());
    await until(async () => (await rows())[0]?.delivery === 'failed', 10_000, 'failed');
    expect(await rows()).toEqual([expect.objectContaining({ delivery: 'failed', attempts: 3, last_error: 'network error: ECONNREFUSED', claimed_until: null })]);
    expect((await a.list({}))[0]).toMatchObject({ delivery: 'failed', attempts: 3, delivered_at: null });
    expect(logs.some((l) => l.startsWith('error ') && /not delivered to 127\.0\.0\.1:\d+ after 3 attempt/.test(l))).toBe(true);
    expect(logs.join('\n')).not.toMatch(/PATHSECRET|QUERYSECRET|whsec_|hooks\/budget/);
  });

  it('an attempt past the time limit is a failure (the receiver never answered)', async () => {
    const hook = await receiver(() => 'hang');
    const a = alerts({ webhook_url: hook.url, secret: SECRET, max_attempts: 1 }, { timeoutMs: 300 });
    a.observe(crossing());
    await until(async () => (await rows())[0]?.delivery === 'failed', 10_000, 'failed');
    expect(await rows()).toEqual([expect.objectContaining({ delivery: 'failed', attempts: 1, last_error: 'timeout after 300 ms' })]);
    expect(hook.received).toHaveLength(1);
  });

  it('another instance carries on the retries of one that stopped', async () => {
    const hook = await receiver((n) => (n === 1 ? 503 : 200));
    const a = alerts({ webhook_url: hook.url, secret: SECRET }, { backoffMs: 200 });
    a.observe(crossing());
    await until(async () => (await rows())[0]?.attempts === 1, 10_000, 'the first attempt');
    await a.close();
    expect(await rows()).toEqual([expect.objectContaining({ delivery: 'pending', attempts: 1, last_error: 'HTTP 503', claimed_until: null })]);
    const b = alerts({ webhook_url: hook.url, secret: SECRET }, { sweepMs: 100 });
    await until(async () => (await rows())[0]?.delivery === 'delivered', 10_000, 'delivered by the other instance');
    expect(hook.received).toHaveLength(2);
    expect(hook.received[1]!.body).toBe(hook.received[0]!.body);
    expect((await b.list({}))[0]).toMatchObject({ delivery: 'delivered', attempts: 2 });
  });

  it('without a webhook alerts are recorded as disabled and listed, filtered, newest first', async () => {
    const a = alerts({ thresholds: [50, 100] });
    const at = Date.parse('2026-11-27T10:00:00Z');
    a.observe(crossing({ keyId: 'key_1', at, beforeNano: 0, afterNano: 6 * USD }));
    a.observe(crossing({ keyId: 'key_2', at: at + 60_000, beforeNano: 0, afterNano: 11 * USD }));
    a.observe(crossing({ scope: 'user', keyId: 'key_2', at: at + 120_000, beforeNano: 0, afterNano: 5 * USD }));
    a.observe(crossing({ userId: 'usr_other', keyId: 'key_9', at: at + 180_000, beforeNano: 0, afterNano: 5 * USD }));
    // Not a crossing, or not usable: nothing recorded, nothing thrown.
    a.observe(crossing({ keyId: 'key_3', beforeNano: 6 * USD, afterNano: 7 * USD }));
    a.observe(crossing({ keyId: null }));
    a.observe(crossing({ period: 'monthly', periodStart: '2026-11-27' }));
    a.observe(crossing({ periodStart: '2026-02-30' }));
    a.observe(null as unknown as BudgetObservation);
    await until(async () => (await a.list({})).length === 5, 10_000, 'five alerts');
    const all = await a.list({});
    expect(all.every((x) => x.delivery === 'disabled' && x.attempts === 0 && x.delivered_at === null)).toBe(true);
    expect(all.map((x) => [x.scope, x.user_id, x.key_id, x.threshold_percent])).toEqual([
      ['key', 'usr_other', 'key_9', 50],
      ['user', 'usr_a', 'key_2', 50],
      ['key', 'usr_a', 'key_2', expect.any(Number)],
      ['key', 'usr_a', 'key_2', expect.any(Number)],
      ['key', 'usr_a', 'key_1', 50],
    ]);
    expect((await a.list({ userId: 'usr_a' })).length).toBe(4);
    expect((await a.list({ userId: 'usr_a', scope: 'user' })).map((x) => x.key_id)).toEqual(['key_2']);
    expect((await a.list({ keyIds: ['key_1', 'key_9'] })).map((x) => x.key_id)).toEqual(['key_9', 'key_1']);
    expect(await a.list({ keyIds: [] })).toEqual([]);
    expect((await a.list({ since: '2026-11-27T10:02:00Z' })).length).toBe(2);
    expect((await a.list({ since: '2026-11-28' })).length).toBe(0);
    expect((await a.list({ limit: 2 })).map((x) => x.user_id)).toEqual(['usr_other', 'usr_a']);
    await expect(a.list({ since: 'yesterday' })).rejects.toThrow(/since/);
    expect(logs.filter((l) => l.startsWith('error ')).length).toBeGreaterThan(0);
  });

  it('an alert the database did not take is recorded (and sent) once it answers again', async () => {
    const hook = await receiver();
    let failing = 2;
    const flaky = {
      query: (text: string, params?: unknown[]) => (failing > 0 && text.startsWith('INSERT') ? (failing--, Promise.reject(Object.assign(new Error('Connection terminated'), { code: 'ECONNRESET' }))) : db.sql.query(text, params)),
    };
    const a = alerts({ webhook_url: hook.url, secret: SECRET }, { sweepMs: 100 }, flaky as unknown as Database['sql']);
    a.observe(crossing());
    await until(() => hook.received.length === 1, 10_000, 'the delivery');
    await until(async () => (await rows())[0]?.delivery === 'delivered', 5_000, 'delivered');
    expect(failing).toBe(0);
    expect(await rows()).toHaveLength(1);
  });
}

describe('embedded database', () => suite('embedded'));
describe('PostgreSQL', () => suite('postgresql'));

it('the gateway builds them from its config, posts from them, and closes them with itself', async () => {
  const hook = await startReceiver();
  const gw = await startTestGateway({ config: `${minimalConfig}budget_alerts:\n  webhook_url: "${hook.url}"\n  secret: ${SECRET}\n  thresholds: [100, 90]\n` });
  try {
    gw.services.budgetAlerts.observe(crossing({ beforeNano: 8 * USD, afterNano: 9.5 * USD }));
    await until(() => hook.received.length === 1, 10_000, 'the delivery');
    expect(JSON.parse(hook.received[0]!.body)).toMatchObject({ threshold_percent: 90, spent_usd: '9.5' });
    expect(verifyBudgetAlertSignature(SECRET, String(hook.received[0]!.headers['x-gateway-signature']), hook.received[0]!.body)).toBe(true);
    await until(async () => (await gw.services.budgetAlerts.list({ keyIds: ['key_a'] }))[0]?.delivery === 'delivered', 5_000, 'delivered');
  } finally {
    await gw.close();
    await hook.close();
  }
});
