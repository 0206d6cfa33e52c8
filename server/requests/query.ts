// Reading the request log: one page of records, newest first, by a (time, id) cursor, each joined
// with its ledger row (usage and cost: one place for money) and its key's prefix and name.
import type { z } from 'zod';
import type { AdminRequestListQuery, RequestList, RequestListQuery, RequestRecord } from '../../contract/requests.ts';
import type { SqlQueryable } from '../db/migrate.ts';
import { errors } from '../runtime/errors.ts';

type Record_ = z.infer<typeof RequestRecord>;
type List = z.infer<typeof RequestList>;

/** Whose records a caller may read, decided by the HTTP layer from the credential. */
export type RequestScope = { userId?: string; keyId?: string; appId?: string };

export type ListInput = z.infer<typeof RequestListQuery> & Partial<Pick<z.infer<typeof AdminRequestListQuery>, 'user'>>;

/** Signed links to a record's captured bodies (the blob keys `<prefix>request`, `<prefix>response`). */
export type BodyLinks = (bodiesKey: string) => NonNullable<Record_['bodies']>;

/** `<created_at ms>.<id>` in base64url: opaque to clients, exact for the database. */
export const cursorOf = (createdAt: Date, id: bigint | string) => Buffer.from(`${createdAt.getTime()}.${id}`).toString('base64url');

/** The largest id a row can have (bigint), and the latest time a cursor can name (year 9999: PostgreSQL's and ISO's four digits). */
const MAX_ROW_ID = 9223372036854775807n;
const MAX_CURSOR_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

function parseCursor(cursor: string): { at: Date; id: string } {
  const m = /^(\d{1,15})\.(\d{1,19})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  // A cursor this list made names a row's time and id; one that cannot (beyond either range) is refused, not looked up.
  if (!m || Number(m[1]) > MAX_CURSOR_MS || BigInt(m[2]!) > MAX_ROW_ID) throw errors.invalid('Not a cursor of this list: pass `next_cursor` of the previous page as it is.', 'cursor');
  return { at: new Date(Number(m[1])), id: m[2]! };
}

const usageColumns = `prompt_tokens, completion_tokens, cached_tokens, reasoning_tokens, cache_write_tokens, audio_input_tokens, image_input_tokens,
  audio_output_tokens, image_output_tokens, web_search_calls, billed_tokens, cost::text AS cost, usage_source, error_code AS ledger_error_code`;

export async function listRequests(sql: SqlQueryable, scope: RequestScope, q: ListInput, links: BodyLinks): Promise<List> {
  const where: string[] = [];
  const params: unknown[] = [];
  const p = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  if (scope.userId !== undefined) where.push(`r.user_id = ${p(scope.userId)}`);
  if (scope.keyId !== undefined) where.push(`r.api_key_id = ${p(scope.keyId)}`);
  if (scope.appId !== undefined) where.push(`r.oauth_app_id = ${p(scope.appId)}`);
  if (q.key !== undefined) where.push(`r.api_key_id = ${p(q.key)}`);
  if (q.model !== undefined) where.push(`r.model = ${p(q.model)}`);
  if (q.client_request_id !== undefined) where.push(`r.client_request_id = ${p(q.client_request_id)}`);
  if (typeof q.status === 'number') where.push(`r.status = ${p(q.status)}`);
  else if (q.status === 'error') where.push('r.status >= 400');
  else if (q.status) where.push(`r.status BETWEEN ${Number(q.status[0]) * 100} AND ${Number(q.status[0]) * 100 + 99}`);
  if (q.start !== undefined) where.push(`r.created_at >= ${p(new Date(q.start))}`);
  if (q.end !== undefined) where.push(`r.created_at < ${p(new Date(q.end))}`);
  if (q.cursor !== undefined) {
    const c = parseCursor(q.cursor);
    where.push(`(r.created_at, r.id) < (${p(c.at)}, ${p(c.id)}::bigint)`);
  }
  const limit = q.limit;
  // The ledger's row: written at settlement, after the request started and (a job) up to a day
  // later; the bounds let the planner skip the partitions of other days. Request ids are the
  // gateway's own, and the row must also be the same key's: a record never shows another's usage.
  const rows = await sql.query(
    `SELECT r.*, k.prefix AS key_prefix, k.name AS key_name, u.*
     FROM (SELECT * FROM request_log r ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY r.created_at DESC, r.id DESC LIMIT ${limit + 1}) r
     LEFT JOIN api_keys k ON k.id = r.api_key_id
     LEFT JOIN LATERAL (
       SELECT ${usageColumns} FROM usage_records ur
       WHERE ur.request_id IN (r.request_id, COALESCE(r.job_id, r.request_id))
         AND ur.api_key_id = r.api_key_id
         AND ur.created_at >= r.created_at - interval '1 minute' AND ur.created_at < r.created_at + interval '1 day'
       ORDER BY ur.created_at LIMIT 1
     ) u ON true
     ORDER BY r.created_at DESC, r.id DESC`,
    params,
  );
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    object: 'list',
    data: page.map((r) => recordOf(r, links)),
    next_cursor: rows.length > limit && last ? cursorOf(asDate(last.created_at), String(last.id)) : null,
  };
}

const asDate = (v: unknown) => (v instanceof Date ? v : new Date(String(v)));
const str = (v: unknown) => (typeof v === 'string' ? v : null);
const int = (v: unknown) => (v === null || v === undefined ? 0 : Number(v));
const intOrNull = (v: unknown) => (v === null || v === undefined ? null : Number(v));
const jsonOf = <T>(v: unknown, fallback: T): T => (typeof v === 'string' ? (JSON.parse(v) as T) : ((v as T) ?? fallback));

function recordOf(r: Record<string, unknown>, links: BodyLinks): Record_ {
  const format = str(r.format);
  return {
    object: 'request',
    request_id: String(r.request_id),
    client_request_id: str(r.client_request_id),
    created_at: asDate(r.created_at).toISOString(),
    method: String(r.method),
    path: String(r.path),
    endpoint: str(r.endpoint),
    format: format === 'openai' || format === 'anthropic' || format === 'gemini' ? format : null,
    model: str(r.model),
    status: Number(r.status),
    // A stream that failed after it started answered 200: its failure is the settlement's.
    error_code: str(r.error_code) ?? str(r.ledger_error_code),
    stream: Boolean(r.stream),
    aborted: Boolean(r.aborted),
    job_id: str(r.job_id),
    latency_ms: Number(r.latency_ms),
    first_token_ms: intOrNull(r.first_token_ms),
    key: str(r.api_key_id) && str(r.key_prefix) ? { id: String(r.api_key_id), prefix: String(r.key_prefix), name: str(r.key_name) } : null,
    user_id: str(r.user_id),
    oauth_app_id: str(r.oauth_app_id),
    upstream: str(r.upstream),
    attempts: jsonOf(r.attempts, []),
    usage:
      r.usage_source === null || r.usage_source === undefined
        ? null
        : {
            prompt_tokens: int(r.prompt_tokens),
            completion_tokens: int(r.completion_tokens),
            cached_tokens: int(r.cached_tokens),
            reasoning_tokens: int(r.reasoning_tokens),
            cache_write_tokens: int(r.cache_write_tokens),
            audio_input_tokens: int(r.audio_input_tokens),
            image_input_tokens: int(r.image_input_tokens),
            audio_output_tokens: int(r.audio_output_tokens),
            image_output_tokens: int(r.image_output_tokens),
            web_search_calls: int(r.web_search_calls),
            billed_tokens: int(r.billed_tokens),
            cost: str(r.cost),
            source: r.usage_source === 'estimated' ? 'estimated' : 'reported',
          },
    warnings: jsonOf(r.warnings, []),
    bodies: str(r.bodies_key) ? links(String(r.bodies_key)) : null,
  };
}
