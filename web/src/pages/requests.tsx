// The request log: one row per request through /v1, newest first, paged by the API's cursor (the
// browser never holds more than one page, however long the log), filtered by the page's query
// string so a view can be linked and reloaded; `?id=` opens one record: its facts, the upstream
// attempts on a time axis, its usage and cost, warnings and the captured bodies.
import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useRef } from 'preact/hooks';
import type { operations } from '../../../clients/typescript/src/index.ts';
import { api, call, loadCatalog, type Schemas, type Session } from '../api.ts';
import { DAY, duration, num, usd } from '../format.ts';
import { navigate, useSearch } from '../router.ts';
import { Alert, Badge, Cell, CopyButton, EmptyState, Loaded, Loading, ModelId, Page, Table, useLoad } from '../ui.tsx';

type RequestRecord = Schemas['RequestRecord'];
type Attempt = Schemas['RequestAttempt'];
// Inlined in the OpenAPI document (nullable where used), so named through the record.
type Usage = NonNullable<RequestRecord['usage']>;
type RequestList = Schemas['RequestList'];
/** The admin route's query: the user route's and `user`. */
type ListQuery = NonNullable<operations['adminRequests']['parameters']['query']>;
type StatusFilter = NonNullable<ListQuery['status']>;

/** Rows per page: enough to scan, few enough to render at once on a phone. */
const PAGE_SIZE = 50;

// ---- The page's state in its URL -------------------------------------------------------------

/** "Last …" ranges: kept in the URL as `since`, so a link shows the last hour whenever it is opened. */
const SINCE = { '1h': 3_600_000, '24h': DAY, '7d': 7 * DAY, '30d': 30 * DAY } as const;
type Since = keyof typeof SINCE;
const SINCE_LABELS: Record<Since, string> = { '1h': 'Last hour', '24h': 'Last 24 hours', '7d': 'Last 7 days', '30d': 'Last 30 days' };
const isSince = (v: string): v is Since => v in SINCE;

const CLASSES = ['2xx', '4xx', '5xx', 'error'] as const;
// Short enough for a select half a phone wide.
const CLASS_LABELS: Record<(typeof CLASSES)[number], string> = { '2xx': '2xx success', '4xx': '4xx', '5xx': '5xx', error: '4xx + 5xx' };

/** The filters as the URL holds them (strings, '' when unset). */
type Filters = { user: string; key: string; model: string; status: string; since: string; start: string; end: string };
const FILTER_NAMES = ['user', 'key', 'model', 'status', 'since', 'start', 'end'] as const satisfies readonly (keyof Filters)[];

function filtersOf(params: URLSearchParams, admin: boolean): Filters {
  const f = Object.fromEntries(FILTER_NAMES.map((n) => [n, params.get(n)?.trim() ?? ''])) as Filters;
  if (!admin) f.user = '';
  return f;
}

const hasFilters = (f: Filters) => FILTER_NAMES.some((n) => f[n] !== '');

/** `base` with the filters and `extra` (cursor, id) that are set, in a stable order. */
function hrefOf(base: string, f: Filters, extra: Record<string, string | null | undefined> = {}): string {
  const q = new URLSearchParams();
  for (const n of FILTER_NAMES) if (f[n]) q.set(n, f[n]);
  for (const [n, v] of Object.entries(extra)) if (v) q.set(n, v);
  const s = q.toString();
  return s ? `${base}?${s}` : base;
}

/** An exact status (`429`) or a class; anything else is no filter (the select then shows "Any"). */
function statusOf(v: string): StatusFilter | undefined {
  if (/^[1-5]\d\d$/.test(v)) return Number(v);
  return (CLASSES as readonly string[]).includes(v) ? (v as StatusFilter) : undefined;
}

/** The API's query: a `since` range becomes a start time counted back from now. */
function queryOf(f: Filters, cursor: string): ListQuery {
  return {
    user: f.user || undefined,
    key: f.key || undefined,
    model: f.model || undefined,
    status: statusOf(f.status),
    start: isSince(f.since) ? new Date(Date.now() - SINCE[f.since]).toISOString() : f.start || undefined,
    end: isSince(f.since) ? undefined : f.end || undefined,
    cursor: cursor || undefined,
    limit: PAGE_SIZE,
  };
}

function loadPage(admin: boolean, query: ListQuery): Promise<RequestList> {
  if (admin) return call(api.GET('/admin/v1/requests', { params: { query } }));
  const { user: _user, ...own } = query;
  return call(api.GET('/v1/requests', { params: { query: own } }));
}

// ---- How values read --------------------------------------------------------------------------

/** "842 ms", "1.24 s", "2 min 03 s": exact milliseconds below a second, where timings are compared. */
export function msText(ms: number | null): string {
  if (ms === null) return '—';
  if (ms < 1000) return `${num(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)} s`;
  return duration(ms);
}

const iso = (t: string) => new Date(t).toISOString();
/** "09:41:07" and "2026-11-28" (UTC, as everywhere on the dashboard). */
const clock = (t: string) => iso(t).slice(11, 19);
const day = (t: string) => iso(t).slice(0, 10);
/** "2026-11-28 09:41:07.123 UTC". */
const fullTime = (t: string) => `${iso(t).slice(0, 23).replace('T', ' ')} UTC`;

/** `text` with line-break opportunities after each of `after` (an error code breaks after its `_`, never inside a word). */
function Breakable({ text, after }: { text: string; after: string }) {
  // Split by hand: a lookbehind would not parse in Safari before 16.4.
  const parts: string[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (after.includes(text[i]!) && i + 1 < text.length) {
      parts.push(text.slice(start, i + 1));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return (
    <>
      {parts.map((p, i) => (
        <>
          {i > 0 && <wbr />}
          {p}
        </>
      ))}
    </>
  );
}

const statusKind = (s: number) => (s >= 500 ? 'bad' : s >= 400 ? 'warn' : s >= 300 ? 'info' : 'ok');

/** "openai#primary": the attempt's pool key names its provider already; a bare alias gets it prepended. */
const attemptUpstream = (a: Attempt) => (a.key ? (a.key.startsWith(`${a.provider}#`) ? a.key : `${a.provider}#${a.key}`) : a.provider);

/** Where the detail of a record is: its request id, and its time to find it again off this page. */
const detailExtra = (r: RequestRecord, cursor: string) => ({ cursor, id: r.request_id, at: r.created_at });

function StatusBadge({ r }: { r: RequestRecord }) {
  return (
    <Badge kind={statusKind(r.status)}>
      <span class="visually-hidden">status </span>
      {r.status}
    </Badge>
  );
}

/** Stream, job, aborted, warnings: what sets a request apart, as small badges. */
function Flags({ r }: { r: RequestRecord }) {
  const flags: ComponentChildren[] = [];
  if (r.stream) flags.push(<Badge kind="info">stream</Badge>);
  if (r.job_id) flags.push(<Badge kind="neutral">job</Badge>);
  if (r.aborted) flags.push(<Badge kind="warn">aborted</Badge>);
  if (r.warnings.length) flags.push(<Badge kind="warn">{r.warnings.length === 1 ? '1 warning' : `${r.warnings.length} warnings`}</Badge>);
  if (!flags.length) return <span class="muted">—</span>;
  return <span class="flags">{flags}</span>;
}

/**
 * The key it was billed to; without one, who sent it: the dashboard (a signed-in session: no key, no
 * app), an OAuth app, or nobody known (a refused credential).
 */
function KeyText({ r }: { r: RequestRecord }) {
  const k = r.key;
  if (k) {
    return (
      <>
        {k.name ?? <span class="muted">unnamed</span>} <code class="nowrap key-prefix">{k.prefix}…</code>
      </>
    );
  }
  if (r.oauth_app_id) return <span class="muted">app {r.oauth_app_id}</span>;
  if (r.user_id) return <span class="muted" title="Sent by the dashboard with the signed-in session">dashboard</span>;
  return <span class="muted" title="No credential was accepted">—</span>;
}

/** The API surface, or for a request that has none (a read such as /v1/keys) its method and path. */
function EndpointText({ r }: { r: RequestRecord }) {
  if (r.endpoint) return <span title={`${r.method} ${r.path}`}>{r.endpoint}</span>;
  // One line, cut with an ellipsis: a file's path holds a long token (the title has it whole).
  return (
    <small class="path" title={`${r.method} ${r.path}`}>
      {r.method} {r.path}
    </small>
  );
}

// ---- The list ---------------------------------------------------------------------------------

export function Requests(_: { session: Session }) {
  return <RequestsPage admin={false} />;
}

export function AdminRequests(_: { session: Session }) {
  return <RequestsPage admin />;
}

function RequestsPage({ admin }: { admin: boolean }) {
  const base = admin ? '/admin/requests' : '/requests';
  const search = useSearch();
  const params = useMemo(() => new URLSearchParams(search), [search]);
  const filters = filtersOf(params, admin);
  const cursor = params.get('cursor') ?? '';
  const selected = params.get('id');
  const listHref = hrefOf(base, filters, { cursor });
  // Loaded again only when the filters or the page change, not when a record is opened or closed.
  const list = useLoad(() => loadPage(admin, queryOf(filters, cursor)), [admin, listHref]);
  // Names for the filters and cells; the log shows without them.
  const keys = useLoad(async () => (admin ? [] : (await call(api.GET('/v1/keys'))).data), [admin]);
  const models = useLoad(async () => (await loadCatalog()).map((m) => m.id));
  // Records name users by id: their emails where the first 500 users hold them.
  const users = useLoad(async () => (admin ? new Map((await call(api.GET('/admin/v1/users', { params: { query: { limit: 500 } } }))).data.map((u) => [u.id, u.email])) : new Map<string, string | null>()), [admin]);

  /**
   * The cursors of the pages opened with "Older", newest first ('' is the newest page): "Newer"
   * goes one back. A page reached otherwise (a link, a reload) has only "Newest".
   */
  const trail = useRef<string[]>(['']);
  /** After a page change, focus goes to its first row; after closing a record, to its row. */
  const focusRow = useRef<{ id: string } | 'first' | null>(null);
  useEffect(() => {
    if (selected || !list.data || list.loading || !focusRow.current) return;
    const want = focusRow.current;
    focusRow.current = null;
    const rows = [...document.querySelectorAll<HTMLTableRowElement>('tr[data-request-id]')];
    const row = want === 'first' ? rows[0] : rows.find((r) => r.dataset.requestId === want.id);
    const link = row?.querySelector<HTMLAnchorElement>('a.row-link');
    if (link) {
      link.focus({ preventScroll: true });
      link.scrollIntoView({ block: want === 'first' ? 'nearest' : 'center' });
    }
  }, [selected, list.data, list.loading]);

  const apply = (f: Filters) => {
    trail.current = [''];
    navigate(hrefOf(base, f));
  };

  if (selected) {
    const record = list.data?.data.find((r) => r.request_id === selected && (!params.get('at') || r.created_at === params.get('at')));
    return (
      <RequestDetail
        admin={admin}
        base={base}
        id={selected}
        at={params.get('at') ?? ''}
        record={record}
        pageLoading={list.data === undefined && !list.error}
        page={list.data?.data ?? []}
        listHref={listHref}
        detailHref={(r) => hrefOf(base, filters, detailExtra(r, cursor))}
        onClose={() => (focusRow.current = { id: selected })}
        users={users.data}
      />
    );
  }

  const older = (next: string) => {
    const at = trail.current.indexOf(cursor);
    trail.current = [...(at < 0 ? [cursor] : trail.current.slice(0, at + 1)), next];
    focusRow.current = 'first';
  };
  const at = trail.current.indexOf(cursor);
  const newer = cursor && at > 0 ? trail.current[at - 1]! : null;

  return (
    <Page
      title={admin ? 'All requests' : 'Requests'}
      intro={
        admin
          ? 'Every request through /v1 by every user, newest first: what it asked for, which upstreams were tried and how long each took, what it cost. Open one for its timeline and bodies.'
          : 'Every request made with your keys, newest first: what it asked for, which upstreams answered and how long they took, what it cost. Open one for its timeline and bodies.'
      }
      actions={
        <button type="button" class="secondary small" onClick={list.reload} disabled={list.loading}>
          Refresh
        </button>
      }
    >
      <FilterForm admin={admin} filters={filters} keys={keys.data} models={models.data} onApply={apply} />
      <Loaded state={list} what="requests">
        {(page) =>
          page.data.length === 0 ? (
            <NoRequests admin={admin} filtered={hasFilters(filters)} older={cursor !== ''} clearHref={base} newestHref={hrefOf(base, filters)} />
          ) : (
            <>
              {/* The dashboard's own changes (a key made or revoked with the session) are logged, its
                  reads are not: a user whose log holds only those has made no API request yet. */}
              {!admin && !cursor && !hasFilters(filters) && !page.next_cursor && page.data.every((r) => !r.key && !r.oauth_app_id) && <NoRequests admin={false} filtered={false} older={false} clearHref={base} newestHref={base} dashboardOnly />}
              <p class="list-summary" role="status">
                {page.data.length === 1 ? '1 request' : `${page.data.length} requests`}
                {cursor ? ' (an older page)' : ', the newest'}, from {fullTime(page.data[0]!.created_at)} back to {fullTime(page.data.at(-1)!.created_at)}
                {list.loading && ' · loading…'}
              </p>
              <RequestTable admin={admin} rows={page.data} href={(r) => hrefOf(base, filters, detailExtra(r, cursor))} users={users.data} busy={list.loading} />
              <nav class="pager" aria-label="Pages of requests">
                {cursor ? (
                  <a class="button secondary small" href={hrefOf(base, filters)} onClick={() => (focusRow.current = 'first')}>
                    Newest
                  </a>
                ) : (
                  <span class="muted">The newest requests</span>
                )}
                {newer !== null && (
                  <a class="button secondary small" href={hrefOf(base, filters, { cursor: newer })} onClick={() => (focusRow.current = 'first')}>
                    ← Newer
                  </a>
                )}
                {page.next_cursor ? (
                  <a class="button secondary small" id="older" href={hrefOf(base, filters, { cursor: page.next_cursor })} onClick={() => older(page.next_cursor!)}>
                    Older →
                  </a>
                ) : (
                  <span class="muted">No older requests</span>
                )}
              </nav>
            </>
          )
        }
      </Loaded>
    </Page>
  );
}

function NoRequests({
  admin,
  filtered,
  older,
  clearHref,
  newestHref,
  dashboardOnly = false,
}: {
  admin: boolean;
  filtered: boolean;
  older: boolean;
  clearHref: string;
  newestHref: string;
  /** The log holds only the dashboard's own reads (listed under this). */
  dashboardOnly?: boolean;
}) {
  if (older) {
    return (
      <EmptyState title="No older requests">
        <p>
          This page is past the oldest request the log keeps{filtered ? ' that matches these filters' : ''}. <a href={newestHref}>Back to the newest</a>.
        </p>
      </EmptyState>
    );
  }
  if (filtered) {
    return (
      <EmptyState title="No request matches these filters">
        <p>
          Try a longer time range or another status, or <a href={clearHref}>clear the filters</a>.
        </p>
      </EmptyState>
    );
  }
  return (
    <EmptyState title="No requests yet">
      {admin ? (
        <p>Every request through /v1, by any user and key (and those refused before a key was known), is recorded here within a second or so of its answer.</p>
      ) : (
        <p>
          Every request made with your API keys through /v1 is recorded here within a second or so of its answer: its status, timings, the upstreams tried and what it cost. No key yet?{' '}
          <a href="/keys">Create one</a> and send a first request.
        </p>
      )}
      {dashboardOnly && <p>Below: what you changed on the dashboard with your signed-in session (its reads are not logged).</p>}
      <p class="muted">Records are kept for the log’s retention (30 days unless the operator set another).</p>
    </EmptyState>
  );
}

/** The filters, applied on submit (and at once when a select changes). */
function FilterForm({ admin, filters, keys, models, onApply }: { admin: boolean; filters: Filters; keys: Schemas['ApiKey'][] | undefined; models: string[] | undefined; onApply: (f: Filters) => void }) {
  const form = useRef<HTMLFormElement>(null);
  const read = (): Filters => {
    const data = new FormData(form.current!);
    const text = (n: string) => String(data.get(n) ?? '').trim();
    const since = text('since');
    // The custom range's inputs are UTC times (as every time on the dashboard); the API takes ISO.
    const utc = (v: string) => (v ? `${v.length === 16 ? `${v}:00` : v}Z` : '');
    return {
      user: admin ? text('user') : '',
      key: text('key'),
      model: text('model'),
      status: text('status'),
      since: since === 'custom' ? '' : since,
      start: since === 'custom' ? utc(text('start')) : '',
      end: since === 'custom' ? utc(text('end')) : '',
    };
  };
  const submit = (e: Event) => {
    e.preventDefault();
    onApply(read());
  };
  const custom = !filters.since && (filters.start !== '' || filters.end !== '');
  const localOf = (v: string) => (v && !Number.isNaN(Date.parse(v)) ? iso(v).slice(0, 16) : '');
  const statusKnown = filters.status === '' || (CLASSES as readonly string[]).includes(filters.status);
  // The fields are uncontrolled (what is typed stays until applied). When the URL's filters change
  // (applied, a link, the back button) they are set to what the list shows; the form is not made
  // anew, so a select changed with the keyboard keeps the focus.
  const stamp = FILTER_NAMES.map((n) => filters[n]).join('\u0000');
  useEffect(() => {
    const f = form.current;
    if (!f) return;
    const set = (name: string, value: string) => {
      const el = f.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement | null;
      if (el && el.value !== value) el.value = value;
    };
    set('user', filters.user);
    set('key', filters.key);
    set('model', filters.model);
    set('status', filters.status);
    set('since', custom ? 'custom' : filters.since);
    set('start', localOf(filters.start));
    set('end', localOf(filters.end));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [stamp]);
  return (
    <form class="filters card" ref={form} onSubmit={submit} aria-label="Filters">
      {admin && (
        <div class="field">
          <label for="f-user">User</label>
          <input id="f-user" name="user" type="search" placeholder="email or id" defaultValue={filters.user} />
        </div>
      )}
      {admin ? (
        <div class="field">
          <label for="f-key">Key id</label>
          <input id="f-key" name="key" type="search" placeholder="key_…" defaultValue={filters.key} />
        </div>
      ) : (
        <div class="field">
          <label for="f-key">Key</label>
          <select id="f-key" name="key" onChange={() => onApply(read())}>
            <option value="">All keys</option>
            {(keys ?? []).map((k) => (
              <option value={k.id} selected={k.id === filters.key}>
                {k.name ?? 'unnamed'} ({k.prefix}…){k.revoked_at ? ', revoked' : ''}
              </option>
            ))}
            {/* A key from the URL that is not (yet) among the listed ones still shows as chosen. */}
            {filters.key && !(keys ?? []).some((k) => k.id === filters.key) && (
              <option value={filters.key} selected>
                {filters.key}
              </option>
            )}
          </select>
        </div>
      )}
      <div class="field">
        <label for="f-model">Model</label>
        <input id="f-model" name="model" type="search" list="f-models" placeholder="any model" defaultValue={filters.model} />
        <datalist id="f-models">
          {(models ?? []).map((m) => (
            <option value={m} />
          ))}
        </datalist>
      </div>
      <div class="field">
        <label for="f-status">Status</label>
        <select id="f-status" name="status" onChange={() => onApply(read())}>
          <option value="">Any status</option>
          {CLASSES.map((c) => (
            <option value={c} selected={c === filters.status}>
              {CLASS_LABELS[c]}
            </option>
          ))}
          {!statusKnown && (
            <option value={filters.status} selected>
              Exactly {filters.status}
            </option>
          )}
        </select>
      </div>
      <div class="field">
        <label for="f-since">Time</label>
        <select id="f-since" name="since" onChange={(e) => (e.target as HTMLSelectElement).value !== 'custom' && onApply(read())}>
          <option value="">Any time</option>
          {(Object.keys(SINCE) as Since[]).map((s) => (
            <option value={s} selected={!custom && s === filters.since}>
              {SINCE_LABELS[s]}
            </option>
          ))}
          <option value="custom" selected={custom}>
            Between… (UTC)
          </option>
        </select>
      </div>
      <CustomRange start={localOf(filters.start)} end={localOf(filters.end)} shown={custom} form={form} />
      <div class="filter-actions">
        <button type="submit" class="small">
          Apply
        </button>
        {hasFilters(filters) && (
          <a class="button secondary small" href={admin ? '/admin/requests' : '/requests'}>
            Clear
          </a>
        )}
      </div>
    </form>
  );
}

/** From and to (UTC), shown when "Between…" is chosen. */
function CustomRange({ start, end, shown, form }: { start: string; end: string; shown: boolean; form: { current: HTMLFormElement | null } }) {
  const box = useRef<HTMLDivElement>(null);
  // The select shows the range without a render of its own: the form's change event toggles it.
  useEffect(() => {
    const f = form.current;
    const sync = () => box.current && (box.current.hidden = (f?.elements.namedItem('since') as HTMLSelectElement | null)?.value !== 'custom');
    f?.addEventListener('change', sync);
    sync();
    return () => f?.removeEventListener('change', sync);
  }, [form]);
  return (
    <div class="range-fields" ref={box} hidden={!shown}>
      <div class="field">
        <label for="f-start">From (UTC)</label>
        <input id="f-start" name="start" type="datetime-local" step={1} defaultValue={start} />
      </div>
      <div class="field">
        <label for="f-end">To (UTC)</label>
        <input id="f-end" name="end" type="datetime-local" step={1} defaultValue={end} />
      </div>
    </div>
  );
}

function RequestTable({ admin, rows, href, users, busy }: { admin: boolean; rows: RequestRecord[]; href: (r: RequestRecord) => string; users: Map<string, string | null> | undefined; busy: boolean }) {
  const columns = ['Time (UTC)', 'Status', 'Model', 'Endpoint', 'Key', ...(admin ? ['User'] : []), 'Upstream', 'Latency', 'First token', 'Tokens', 'Cost', 'Flags'];
  // Arrow keys move between the rows' links (Tab reaches them too; Enter opens one).
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
    const row = (e.target as Element).closest('tr');
    if (!row || !(e.target as Element).matches('a.row-link')) return;
    const next = (e.key === 'ArrowDown' ? row.nextElementSibling : row.previousElementSibling)?.querySelector<HTMLAnchorElement>('a.row-link');
    if (next) {
      e.preventDefault();
      next.focus();
    }
  };
  // A click anywhere on a row opens it (its link is the keyboard's way in), unless on another control.
  const onClick = (e: MouseEvent) => {
    const target = e.target as Element;
    if (target.closest('a, button, input, select') || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || getSelection()?.toString()) return;
    const link = target.closest('tr')?.querySelector<HTMLAnchorElement>('a.row-link');
    if (link) navigate(link.pathname + link.search);
  };
  return (
    <div class="requests-table" aria-busy={busy} onKeyDown={onKeyDown} onClick={onClick}>
      <Table caption="Requests, newest first" columns={columns} numeric={['Latency', 'First token', 'Tokens', 'Cost']}>
        {rows.map((r) => (
          <tr data-request-id={r.request_id} class={`status-${statusKind(r.status)}`}>
            <Cell label="Time (UTC)">
              <a class="row-link" href={href(r)} title={`Open request ${r.request_id}`}>
                <time dateTime={r.created_at}>{clock(r.created_at)}</time>
              </a>
              <small class="muted cell-note nowrap">{day(r.created_at)}</small>
            </Cell>
            <Cell label="Status">
              <StatusBadge r={r} />
              {r.error_code && (
                <small class="cell-note">
                  <Breakable text={r.error_code} after="_" />
                </small>
              )}
            </Cell>
            <Cell label="Model" class="wide">
              {r.model ? <ModelId id={r.model} /> : <span class="muted">—</span>}
            </Cell>
            <Cell label="Endpoint">
              <EndpointText r={r} />
            </Cell>
            <Cell label="Key">
              <KeyText r={r} />
            </Cell>
            {admin && (
              <Cell label="User">
                <UserText id={r.user_id} users={users} />
              </Cell>
            )}
            <Cell label="Upstream">
              {r.upstream ? <Breakable text={r.upstream} after="#" /> : <span class="muted">—</span>}
              {r.attempts.length > 1 && <small class="cell-note">{r.attempts.length} attempts</small>}
            </Cell>
            <Cell label="Latency" class="num">
              {msText(r.latency_ms)}
            </Cell>
            <Cell label="First token" class="num">
              {msText(r.first_token_ms)}
            </Cell>
            <Cell label="Tokens" class="num">
              {r.usage ? num(r.usage.billed_tokens) : <NotBilled />}
            </Cell>
            <Cell label="Cost" class="num">
              {r.usage ? <CostText cost={r.usage.cost} /> : <NotBilled />}
            </Cell>
            <Cell label="Flags">
              <Flags r={r} />
            </Cell>
          </tr>
        ))}
      </Table>
    </div>
  );
}

function NotBilled() {
  return (
    <>
      <span aria-hidden="true" class="muted">
        —
      </span>
      <span class="visually-hidden">not billed</span>
    </>
  );
}

function CostText({ cost }: { cost: string | null }) {
  if (cost !== null) return <span title={`$${cost}`}>{usd(cost)}</span>;
  return (
    <>
      <span aria-hidden="true" title="No known price">
        —
      </span>
      <span class="visually-hidden">no known price</span>
    </>
  );
}

function UserText({ id, users }: { id: string | null; users: Map<string, string | null> | undefined }) {
  if (!id) return <span class="muted">—</span>;
  const email = users?.get(id);
  // An address may break before its '@', in a narrow column.
  if (!email) return <small class="break">{id}</small>;
  const at = email.lastIndexOf('@');
  return (
    <span title={id}>
      {email.slice(0, at)}
      <wbr />
      {email.slice(at)}
    </span>
  );
}

// ---- One record -------------------------------------------------------------------------------

function RequestDetail({
  admin,
  base,
  id,
  at,
  record,
  pageLoading,
  page,
  listHref,
  detailHref,
  onClose,
  users,
}: {
  admin: boolean;
  base: string;
  id: string;
  at: string;
  record: RequestRecord | undefined;
  pageLoading: boolean;
  page: RequestRecord[];
  listHref: string;
  detailHref: (r: RequestRecord) => string;
  onClose: () => void;
  users: Map<string, string | null> | undefined;
}) {
  // Not on the loaded page (a link opened later, when newer requests have pushed it off): found
  // again by its time, a one-second window of the log.
  const found = useLoad(async () => {
    if (record || pageLoading || !at || Number.isNaN(Date.parse(at))) return null;
    const t = Date.parse(at);
    const query: ListQuery = { start: new Date(t).toISOString(), end: new Date(t + 1000).toISOString(), limit: 200 };
    return (await loadPage(admin, query)).data.find((r) => r.request_id === id) ?? null;
  }, [id, at, !!record, pageLoading]);
  const r = record ?? found.data ?? undefined;
  const index = record ? page.indexOf(record) : -1;
  const newer = index > 0 ? page[index - 1] : undefined;
  const older = index >= 0 ? page[index + 1] : undefined;
  const close = () => {
    onClose();
    navigate(listHref);
  };
  // Escape goes back to the list, as a closing panel would.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape' && !e.defaultPrevented && !document.querySelector('dialog[open]')) close();
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  });
  return (
    <Page
      title="Request details"
      intro={
        r && (
          <span class="id-copy">
            <code class="break">{r.request_id}</code>
            <CopyButton text={r.request_id} label="Copy id" />
          </span>
        )
      }
    >
      <nav class="detail-nav" aria-label="Requests">
        <a href={listHref} onClick={onClose} class="button secondary small" id="back-to-list">
          ← All requests
        </a>
        {newer && (
          <a href={detailHref(newer)} class="button secondary small" rel="prev">
            ↑ Newer request
          </a>
        )}
        {older && (
          <a href={detailHref(older)} class="button secondary small" rel="next">
            ↓ Older request
          </a>
        )}
      </nav>
      {r ? (
        <RecordView r={r} admin={admin} base={base} users={users} />
      ) : pageLoading || found.loading ? (
        <Loading what="the request" />
      ) : found.error ? (
        <Alert>Could not load the request: {found.error}</Alert>
      ) : (
        <EmptyState title="Request not found">
          <p>
            The log has no request <code class="break">{id}</code>
            {admin ? '' : ' of yours'}: it may be older than the log keeps. <a href={base}>See the newest requests</a>.
          </p>
        </EmptyState>
      )}
    </Page>
  );
}

function Fact({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

function RecordView({ r, admin, base, users }: { r: RequestRecord; admin: boolean; base: string; users: Map<string, string | null> | undefined }) {
  const none = <span class="muted">none</span>;
  return (
    <div class="record" id="request-detail" data-request-id={r.request_id}>
      <section class="card record-head" aria-label="Summary">
        <div class="record-title">
          <StatusBadge r={r} />
          <code class="break">
            {r.method} {r.path}
          </code>
          {(r.stream || r.job_id || r.aborted || r.warnings.length > 0) && <Flags r={r} />}
        </div>
        <dl class="details" id="request-facts">
          <Fact label="Request id">
            <code class="break">{r.request_id}</code>
          </Fact>
          {r.client_request_id !== null && (
            <Fact label="Client's id">
              <code class="break">{r.client_request_id}</code>
            </Fact>
          )}
          <Fact label="Time">{fullTime(r.created_at)}</Fact>
          <Fact label="Status">
            {r.status}
            {r.error_code && <> · <code>{r.error_code}</code></>}
          </Fact>
          <Fact label="Model">{r.model ? <ModelId id={r.model} /> : none}</Fact>
          <Fact label="Endpoint">
            {r.endpoint ?? none}
            {r.format && <span class="muted"> ({r.format} format)</span>}
          </Fact>
          <Fact label="Latency">{msText(r.latency_ms)}</Fact>
          <Fact label="First token">{msText(r.first_token_ms)}</Fact>
          <Fact label="Upstream">{r.upstream ?? none}</Fact>
          <Fact label="Key">
            {r.key ? (
              <>
                <KeyText r={r} />{' '}
                <a href={`${base}?key=${encodeURIComponent(r.key.id)}`} class="nowrap">
                  its requests
                </a>
              </>
            ) : (
              <span class="muted">none: {r.oauth_app_id ? 'an OAuth app’s token' : r.user_id ? 'the dashboard’s signed-in session' : 'no credential was accepted'}</span>
            )}
          </Fact>
          {admin && (
            <Fact label="User">
              {r.user_id ? (
                <>
                  <UserText id={r.user_id} users={users} />{' '}
                  <a href={`/admin/requests?user=${encodeURIComponent(r.user_id)}`} class="nowrap">
                    their requests
                  </a>
                </>
              ) : (
                none
              )}
            </Fact>
          )}
          {r.oauth_app_id && (
            <Fact label="OAuth app">
              <code>{r.oauth_app_id}</code>
            </Fact>
          )}
          <Fact label="Stream">{r.stream ? 'yes' : 'no'}</Fact>
          <Fact label="Aborted">{r.aborted ? 'yes: the client went away before the answer ended' : 'no'}</Fact>
          <Fact label="Job">
            {r.job_id ? (
              <>
                <code>{r.job_id}</code> <a href="/jobs">Jobs</a>
              </>
            ) : (
              none
            )}
          </Fact>
        </dl>
      </section>
      <Timeline r={r} />
      <UsageView usage={r.usage} />
      <section class="card" aria-labelledby="warnings-h">
        <h2 id="warnings-h">Warnings</h2>
        {r.warnings.length ? (
          <ul class="warnings" id="request-warnings">
            {r.warnings.map((w) => (
              <li>{w}</li>
            ))}
          </ul>
        ) : (
          <p class="muted">None: the request was served as sent.</p>
        )}
      </section>
      <Bodies bodies={r.bodies} />
    </div>
  );
}

// ---- The attempts on a time axis --------------------------------------------------------------

/** 1, 2, 2.5 or 5 × 10ⁿ: a step that gives about four ticks over `span`. */
function tickStep(span: number): number {
  const raw = span / 4;
  const p = 10 ** Math.floor(Math.log10(raw));
  return ([1, 2, 2.5, 5, 10].find((m) => m * p >= raw) ?? 10) * p;
}

const tickText = (ms: number) => (ms >= 1000 ? `${+(ms / 1000).toFixed(2)} s` : `${+ms.toFixed(1)} ms`);

/** What an attempt did, in words (the bar says the same to the eye): "at 2 ms, failed after 7 ms: http_404 (HTTP 404)". */
function outcomeOf(a: Attempt, stream: boolean): { kind: 'failed' | 'answered' | 'late' | 'open'; text: string } {
  const at = `at ${msText(a.start_ms)}`;
  const took = a.ms === null ? null : msText(a.ms);
  const status = a.status !== null ? ` (HTTP ${a.status})` : '';
  if (a.failure) return { kind: 'failed', text: `${at}, failed${took ? ` after ${took}` : ''}: ${a.failure}${status}` };
  if (a.ms === null) return { kind: 'open', text: `${at}, no answer before the request ended` };
  const first = `${at}, ${stream ? 'first event' : 'answered'} after ${took}`;
  if (a.late_failure) return { kind: 'late', text: `${first}, then failed: ${a.late_failure}${status}` };
  return { kind: 'answered', text: first };
}

function Timeline({ r }: { r: RequestRecord }) {
  const ends = r.attempts.map((a) => a.start_ms + (a.ms ?? 0));
  const span = Math.max(1, r.latency_ms, r.first_token_ms ?? 0, ...ends);
  const pct = (ms: number) => `${((Math.min(Math.max(ms, 0), span) / span) * 100).toFixed(3)}%`;
  const step = tickStep(span);
  const ticks: number[] = [];
  for (let t = 0; t <= span + 1e-9; t += step) ticks.push(t);
  // The answer is the last attempt that answered (a failover ends with it).
  const answeredIndex = r.attempts.findLastIndex((a) => !a.failure && a.ms !== null);
  return (
    <section class="card" aria-labelledby="timeline-h" id="request-timeline">
      <h2 id="timeline-h">Upstream attempts</h2>
      {r.attempts.length === 0 ? (
        <p class="muted" id="no-attempts">
          No upstream was called: the gateway answered itself ({r.status}
          {r.error_code ? ` ${r.error_code}` : ''}) after {msText(r.latency_ms)}.
        </p>
      ) : (
        <>
          <p class="muted">
            {r.attempts.length === 1 ? '1 attempt' : `${r.attempts.length} attempts`}
            {r.first_token_ms !== null && <>; first token at {msText(r.first_token_ms)}</>}; done at {msText(r.latency_ms)}. Times from the request’s arrival.
          </p>
          <ol class="timeline">
            {r.attempts.map((a, i) => {
              const o = outcomeOf(a, r.stream);
              const answerEnd = a.start_ms + (a.ms ?? 0);
              return (
                <li class={`attempt ${o.kind}${i === answeredIndex ? ' answering' : ''}`} data-start-ms={a.start_ms} data-ms={a.ms ?? ''}>
                  <div class="attempt-label">
                    <span class="attempt-name">
                      <span class="attempt-n">{i + 1}.</span> <strong>{attemptUpstream(a)}</strong>
                      {a.upstream_model && <code>{a.upstream_model}</code>}
                    </span>
                    <span class="attempt-outcome">
                      {o.kind === 'failed' ? <Badge kind="bad">failed</Badge> : o.kind === 'late' ? <Badge kind="warn">late failure</Badge> : o.kind === 'open' ? <Badge>no answer</Badge> : i === answeredIndex ? <Badge kind="ok">answered</Badge> : <Badge kind="ok">ok</Badge>}{' '}
                      <span class="attempt-text">{o.text}</span>
                    </span>
                  </div>
                  <div class="track" aria-hidden="true">
                    {ticks.map((t) => (
                      <span class="grid-line" style={{ left: pct(t) }} />
                    ))}
                    <span class="seg main" style={{ left: pct(a.start_ms), width: `max(3px, ${pct(a.ms ?? span - a.start_ms)})` }} />
                    {/* After the first event, a stream's answer goes on until the request ends (or, a late failure, until it broke). */}
                    {(o.kind === 'late' || (i === answeredIndex && r.stream)) && r.latency_ms > answerEnd && <span class={`seg tail ${o.kind}`} style={{ left: pct(answerEnd), width: pct(r.latency_ms - answerEnd) }} />}
                    {r.first_token_ms !== null && <span class="marker first" style={{ left: pct(r.first_token_ms) }} />}
                    <span class="marker end" style={{ left: pct(r.latency_ms) }} />
                  </div>
                </li>
              );
            })}
          </ol>
          <div class="axis" aria-hidden="true">
            <span />
            <div class="axis-ticks">
              {ticks.map((t) => (
                // Near the end, a label ends at its tick instead of running past the axis.
                <span class={t > 0 && t / span > 0.88 ? 'last' : undefined} style={{ left: pct(t) }}>
                  {tickText(t)}
                </span>
              ))}
            </div>
          </div>
          <ul class="legend" aria-label="Legend">
            {/* What this timeline draws, and only that. */}
            {r.attempts.some((a) => !a.failure && a.ms !== null) && (
              <li>
                <span class="swatch answered" /> answered
              </li>
            )}
            {r.attempts.some((a) => a.failure) && (
              <li>
                <span class="swatch failed" /> failed
              </li>
            )}
            {r.stream && answeredIndex >= 0 && !r.attempts[answeredIndex]!.late_failure && (
              <li>
                <span class="swatch tail" /> streaming
              </li>
            )}
            {r.attempts.some((a) => a.late_failure) && (
              <li>
                <span class="swatch late" /> stream broke (late failure)
              </li>
            )}
            {r.first_token_ms !== null && (
              <li>
                <span class="swatch first" /> first token
              </li>
            )}
            <li>
              <span class="swatch end" /> done
            </li>
          </ul>
        </>
      )}
    </section>
  );
}

// ---- Usage ------------------------------------------------------------------------------------

/** Every count of the ledger's record, in the order people read them (a new one in the contract must be named here). */
const USAGE_LABELS: Record<Exclude<keyof Usage, 'billed_tokens' | 'cost' | 'source'>, string> = {
  prompt_tokens: 'Prompt tokens',
  completion_tokens: 'Completion tokens',
  cached_tokens: 'Cached prompt tokens',
  reasoning_tokens: 'Reasoning tokens',
  cache_write_tokens: 'Cache write tokens',
  audio_input_tokens: 'Audio input tokens',
  image_input_tokens: 'Image input tokens',
  audio_output_tokens: 'Audio output tokens',
  image_output_tokens: 'Image output tokens',
  web_search_calls: 'Web search calls',
};

function UsageView({ usage }: { usage: Usage | null }) {
  return (
    <section class="card" aria-labelledby="usage-h" id="request-usage">
      <h2 id="usage-h">Usage and cost</h2>
      {usage === null ? (
        <p class="muted">Not billed: the request was refused before it was admitted.</p>
      ) : (
        <>
          <div class="totals">
            <div>
              <span class="big" id="request-billed">
                {num(usage.billed_tokens)}
              </span>
              billed tokens
            </div>
            <div>
              <span class="big" id="request-cost" title={usage.cost === null ? 'No known price' : `$${usage.cost}`}>
                {usd(usage.cost)}
              </span>
              {usage.cost === null ? 'cost: no known price' : 'cost'}
            </div>
          </div>
          <p class="muted" id="usage-source">
            {usage.source === 'reported' ? 'As the upstream reported them.' : 'Estimated by the gateway: the upstream reported none.'}
          </p>
          <dl class="details usage-buckets">
            {(Object.keys(USAGE_LABELS) as (keyof typeof USAGE_LABELS)[]).map((k) => (
              <Fact label={USAGE_LABELS[k]}>
                <span class={usage[k] === 0 ? 'muted' : undefined}>{num(usage[k])}</span>
              </Fact>
            ))}
          </dl>
        </>
      )}
    </section>
  );
}

// ---- Captured bodies --------------------------------------------------------------------------

type Body = { text: string; kind: 'JSON' | 'SSE' | 'text'; bytes: number };

/**
 * The body behind a signed link. Fetched from this origin: the page's CSP admits no other, and the
 * link's path (`/v1/files/…`) is all that names the file (the host it carries may be the gateway's
 * public address, not the one this browser reached it at).
 */
async function fetchBody(url: string): Promise<Body> {
  const u = new URL(url, location.origin);
  const res = await fetch(u.pathname.startsWith('/v1/files/') ? u.pathname + u.search : u.href, { credentials: 'same-origin' });
  if (!res.ok) throw new Error(`the link answered ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`);
  const type = res.headers.get('content-type') ?? '';
  const text = await res.text();
  const bytes = new TextEncoder().encode(text).length;
  if (/json/i.test(type)) {
    try {
      return { text: JSON.stringify(JSON.parse(text), null, 2), kind: 'JSON', bytes };
    } catch {
      // Cut at the capture's size limit, a JSON body no longer parses: shown as it came.
      return { text, kind: 'text', bytes };
    }
  }
  // A stream's events are stored as plain text (a browser opening the link shows them, not a
  // download): known by their lines' field names.
  const sse = /event-stream/i.test(type) || /^(data|event|id|retry):|^:/.test(text.trimStart());
  return { text, kind: sse ? 'SSE' : 'text', bytes };
}

function Bodies({ bodies }: { bodies: RequestRecord['bodies'] }) {
  return (
    <section class="card" aria-labelledby="bodies-h" id="request-bodies">
      <h2 id="bodies-h">Bodies</h2>
      {bodies === null ? (
        <p class="muted">Not captured: bodies are kept only when capture is on for the key or the whole gateway (the operator’s setting).</p>
      ) : (
        <>
          <p class="muted">As the client sent and received them, secrets and media elided, size-capped. The links work until {fullTime(bodies.expires_at)}; reload the page for new ones.</p>
          <BodyView id="request-body" title="Request body" url={bodies.request_url} expires={bodies.expires_at} />
          <BodyView id="response-body" title="Response body" url={bodies.response_url} expires={bodies.expires_at} />
        </>
      )}
    </section>
  );
}

function BodyView({ id, title, url, expires }: { id: string; title: string; url: string | null; expires: string }) {
  const state = useLoad(async () => (url ? fetchBody(url) : null), [url]);
  return (
    <div class="body-view" id={id}>
      <h3>
        {title}
        {state.data && (
          <small class="muted">
            {' '}
            · {state.data.kind} · {num(state.data.bytes)} bytes
          </small>
        )}
      </h3>
      {url === null ? (
        <p class="muted">None captured.</p>
      ) : state.error ? (
        <Alert>
          Could not load the {title.toLowerCase()}: {state.error}. {Date.parse(expires) <= Date.now() ? `Its link expired at ${fullTime(expires)}` : 'Its link may have expired'}: reload the page
          for a new one.
        </Alert>
      ) : !state.data ? (
        <Loading what={`the ${title.toLowerCase()}`} />
      ) : (
        <pre class="body-text" tabIndex={0} role="region" aria-label={title}>
          <code>{state.data.text || '(empty)'}</code>
        </pre>
      )}
    </div>
  );
}
