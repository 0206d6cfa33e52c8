// The request log's writer never lets one record stop the others (issue 42): every string it
// stores is made storable (a NUL, a lone surrogate, a path of any length), and a row the database
// still refuses is dropped alone, counted, while the rest of its batch is written.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../server/db/client.ts';
import { RequestTrails, type TrailEnd } from '../../server/observe/request-trail.ts';
import { RequestLog } from '../../server/requests/request-log.ts';
import { systemClock } from '../../server/runtime/clock.ts';
import { RequestLogConfig } from '../../server/config/schema.ts';
import { freshDataDir } from '../helpers/gateway.ts';

let db: Database;
beforeAll(async () => {
  db = await openDatabase({ dataDir: freshDataDir() });
});
afterAll(async () => db?.close());

const end = (over: Partial<TrailEnd> = {}): TrailEnd => ({ status: 200, errorCode: null, aborted: false, totalMs: 12, warnings: [], principal: { keyId: 'key_w', userId: 'usr_w', appId: null }, ...over });

it('writes every good record of a batch that holds a bad one, and counts the one it drops', async () => {
  const dropped: string[] = [];
  const log = new RequestLog(db.sql, RequestLogConfig.parse({}), null, systemClock(), { flushMs: 60_000, dropped: (reason) => dropped.push(reason) });
  const trails = new RequestTrails();
  const trail = (id: string, path = '/v1/chat/completions') => {
    const t = trails.start(id, 'POST', path, {});
    t.model = 'm';
    return t;
  };
  log.record(trail('req_ok1'), end(), null, null);
  // What the database could never hold as such: made storable.
  const odd = trail('req_odd', `/v1/${'p'.repeat(5000)}\u0000`);
  odd.model = 'x\u0000y\ud800';
  odd.clientRequestId = 'c'.repeat(600);
  log.record(odd, end({ warnings: ['dropped \u0000 field'], errorCode: 'e\u0000' }), 'up\u0000stream', null);
  // What it refuses whatever is done to its strings: a latency past an integer column.
  log.record(trail('req_bad'), end({ totalMs: 3e12 }), null, null);
  log.record(trail('req_ok2'), end(), null, null);
  await log.flush();
  await log.close();
  const rows = await db.sql.query(`SELECT request_id, path, model, client_request_id, error_code, upstream, warnings::text AS warnings FROM request_log WHERE api_key_id = 'key_w' ORDER BY id`);
  expect(rows.map((r) => r.request_id)).toEqual(['req_ok1', 'req_odd', 'req_ok2']);
  const o = rows[1]!;
  expect(String(o.path)).toHaveLength(2048);
  expect(o.model).toBe('x\uFFFDy\uFFFD');
  expect(String(o.client_request_id)).toHaveLength(512);
  expect(o.error_code).toBe('e\uFFFD');
  expect(o.upstream).toBe('up\uFFFDstream');
  expect(JSON.parse(String(o.warnings))).toEqual(['dropped \uFFFD field']);
  expect(dropped).toEqual(['rejected']);
});
