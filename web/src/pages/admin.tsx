// The operator view: every action goes through the admin API with the admin's session, and the
// gateway logs each change with who made it.
import { useMemo, useState } from 'preact/hooks';
import { api, call, type Schemas, type Session } from '../api.ts';
import { BudgetEditor, BudgetLines, type BudgetField } from '../budgets.tsx';
import { StackedBars } from '../chart.tsx';
import { DAY, dollars, num, pct, usd, usdOf, utcDay, when } from '../format.ts';
import { BudgetAlerts, csv, csvUsd, download, unpricedText } from '../money.tsx';
import { BreakerState, KeyState, strategyText } from './models.tsx';
import { Badge, Cell, CountedCells, ConfirmButton, EmptyState, Loaded, ModelId, NumCell, Page, SearchForm, Table, UnpricedNote, UsdCell, useLoad } from '../ui.tsx';

type User = Schemas['AdminUser'];

function PlanChange({ user, plans, onDone }: { user: User; plans: Schemas['Plan'][]; onDone: () => void }) {
  const [plan, setPlan] = useState(user.plan);
  const id = `plan-${user.id}`;
  return (
    <div class="plan-change">
      <label for={id} class="visually-hidden">
        Plan of {user.email ?? user.id}
      </label>
      <select id={id} value={plan} onChange={(e) => setPlan((e.target as HTMLSelectElement).value)}>
        {plans.map((p) => (
          <option value={p.id}>{p.id}</option>
        ))}
      </select>
      <ConfirmButton
        label="Change"
        danger={false}
        disabled={plan === user.plan}
        ariaLabel={`Change the plan of ${user.email ?? user.id}`}
        title={`Move ${user.email ?? user.id} to ${plan}?`}
        body={
          <p>
            Their limits change within seconds: {num(plans.find((p) => p.id === plan)?.daily_tokens)} tokens a day and {num(plans.find((p) => p.id === plan)?.requests_per_minute)} requests a
            minute per key.
          </p>
        }
        confirm="Change plan"
        onConfirm={async () => {
          await call(api.PATCH('/admin/v1/users/{user}', { params: { path: { user: user.id } }, body: { plan } }));
          onDone();
        }}
      />
    </div>
  );
}

/**
 * A user's own spend budgets over all their keys and apps (instead of their plan's
 * `user_daily_budget_usd` / `user_monthly_budget_usd`), and the button that changes them.
 */
function UserBudgets({ user, plan, onDone }: { user: User; plan: Schemas['Plan'] | undefined; onDone: () => void }) {
  const who = user.email ?? user.id;
  const planOf = (field: BudgetField) => (field === 'daily_budget_usd' ? plan?.user_daily_budget_usd : plan?.user_monthly_budget_usd);
  const planText = (field: BudgetField) => {
    const v = planOf(field);
    return v === undefined ? 'the plan’s' : `${v === null ? 'none' : usd(v)} (plan’s)`;
  };
  const hint = (field: BudgetField, per: string) => {
    const v = planOf(field);
    return `Empty: the plan’s${v === undefined ? '' : v === null ? ` (${user.plan} sets none)` : ` (${user.plan}: ${usd(v)} ${per})`}.`;
  };
  return (
    <div class="budget-cell">
      <BudgetLines id={`user-budgets-${user.id}`} own={user} unset={planText} />
      <BudgetEditor
        id={`budgets-${user.id}`}
        label="Edit budgets"
        ariaLabel={`Edit budgets of ${who}`}
        title={`Spend budgets of ${who}`}
        intro={<p>Over all their keys and apps, instead of their plan’s. Each key’s own budget (the plan’s, or the key’s cap if lower) still holds.</p>}
        own={user}
        fieldLabel={(period) => `${period} budget (US dollars)`}
        hints={{ daily_budget_usd: hint('daily_budget_usd', 'a day'), monthly_budget_usd: hint('monthly_budget_usd', 'a month') }}
        save={async (change) => {
          await call(api.PATCH('/admin/v1/users/{user}', { params: { path: { user: user.id } }, body: change }));
        }}
        onSaved={onDone}
      />
    </div>
  );
}

export function AdminUsers({ session }: { session: Session }) {
  const [query, setQuery] = useState('');
  const users = useLoad(async () => (await call(api.GET('/admin/v1/users', { params: { query: { q: query || undefined, limit: 200 } } }))).data, [query]);
  const plans = useLoad(async () => (await call(api.GET('/admin/v1/plans'))).data);
  return (
    <Page title="Users" intro="Search users, change their plan or their spend budgets, or disable them. Each change is logged with your user id.">
      <SearchForm id="user-search" label="Search by email, name or id" button="Search" onSearch={setQuery} />
      <Loaded state={users} what="users">
        {(list) =>
          list.length === 0 ? (
            <EmptyState title={query ? `No user matches “${query}”` : 'No users yet'} />
          ) : (
            <Table caption="Users" columns={['User', 'Plan', 'Spend budgets', 'Role', 'Status', '']}>
              {list.map((u) => (
                <tr id={`user-${u.id}`}>
                  <Cell label="User">
                    {u.email ?? <span class="muted">no email</span>}
                    {u.name && <> · {u.name}</>}
                    <br />
                    <small class="muted">
                      {u.id} · since {when(u.created_at)}
                    </small>
                  </Cell>
                  <Cell label="Plan">{plans.data ? <PlanChange user={u} plans={plans.data} onDone={users.reload} /> : u.plan}</Cell>
                  <Cell label="Spend budgets">
                    <UserBudgets user={u} plan={plans.data?.find((p) => p.id === u.plan)} onDone={users.reload} />
                  </Cell>
                  <Cell label="Role">{u.role === 'admin' ? <Badge kind="info">admin</Badge> : 'user'}</Cell>
                  <Cell label="Status">{u.disabled ? <Badge kind="bad">disabled</Badge> : <Badge kind="ok">active</Badge>}</Cell>
                  <Cell label="Actions" class="actions">
                    {u.id !== session.user.id && (
                      <ConfirmButton
                        label={u.disabled ? 'Enable' : 'Disable'}
                        danger={!u.disabled}
                        ariaLabel={`${u.disabled ? 'Enable' : 'Disable'} ${u.email ?? u.id}`}
                        title={`${u.disabled ? 'Enable' : 'Disable'} ${u.email ?? u.id}?`}
                        body={
                          <p>
                            {u.disabled
                              ? 'They can sign in again, and their keys work again within seconds.'
                              : 'They are signed out and cannot sign in; every key of theirs is refused within seconds.'}
                          </p>
                        }
                        confirm={u.disabled ? 'Enable user' : 'Disable user'}
                        onConfirm={async () => {
                          await call(api.PATCH('/admin/v1/users/{user}', { params: { path: { user: u.id } }, body: { disabled: !u.disabled } }));
                          users.reload();
                        }}
                      />
                    )}
                  </Cell>
                </tr>
              ))}
            </Table>
          )
        }
      </Loaded>
    </Page>
  );
}

export function AdminKeys(_: { session: Session }) {
  const [filter, setFilter] = useState('');
  const keys = useLoad(async () => (await call(api.GET('/admin/v1/keys', { params: { query: { user: filter || undefined } } }))).data, [filter]);
  return (
    <Page title="All keys" intro="API keys of every user (never the keys themselves), with their own spend caps (beside the plan’s per-key budget: the lower binds). Revoking one is refused by every gateway within seconds.">
      <SearchForm id="key-user" label="Only the keys of (user id or email)" button="Show" onSearch={setFilter} />
      <Loaded state={keys} what="keys">
        {(list) =>
          list.length === 0 ? (
            <EmptyState title="No keys" />
          ) : (
            <Table caption="API keys" columns={['Key', 'User', 'Kind', 'Created', 'Last used', 'Spend caps', '']}>
              {list.map((k) => (
                <tr id={`admin-key-${k.id}`}>
                  <Cell label="Key">
                    {k.name ?? 'unnamed'} <code class="nowrap">{k.prefix}…</code>
                  </Cell>
                  <Cell label="User">
                    <small>{k.user_id}</small>
                  </Cell>
                  <Cell label="Kind">{k.kind.replace('_', ' ')}</Cell>
                  <Cell label="Created">{when(k.created_at)}</Cell>
                  <Cell label="Last used">{when(k.last_used_at)}</Cell>
                  <Cell label="Spend caps">
                    {k.revoked_at ? (
                      <span class="muted">—</span>
                    ) : (
                      <div class="budget-cell">
                        <BudgetLines id={`admin-key-caps-${k.id}`} own={k} unset={() => 'none'} />
                        <BudgetEditor
                          id={`admin-caps-${k.id}`}
                          label="Edit caps"
                          ariaLabel={`Edit caps of key ${k.prefix}`}
                          title={`Spend caps of ${k.name ?? k.prefix}`}
                          intro={<p>Beside the per-key budget of its owner’s plan: the lower binds. Its owner can change them too.</p>}
                          own={k}
                          fieldLabel={(period) => `${period} cap (US dollars)`}
                          hints={{ daily_budget_usd: 'Empty: no daily cap of its own.', monthly_budget_usd: 'Empty: no monthly cap of its own.' }}
                          save={async (change) => {
                            await call(api.PATCH('/admin/v1/keys/{id}', { params: { path: { id: k.id } }, body: change }));
                          }}
                          onSaved={keys.reload}
                        />
                      </div>
                    )}
                  </Cell>
                  <Cell label="Actions" class="actions">
                    {k.revoked_at ? (
                      <Badge kind="bad">revoked</Badge>
                    ) : (
                      <ConfirmButton
                        label="Revoke"
                        ariaLabel={`Revoke key ${k.prefix}`}
                        title={`Revoke ${k.name ?? k.prefix}?`}
                        body={<p>The key’s owner loses it within seconds; this cannot be undone.</p>}
                        confirm="Revoke key"
                        onConfirm={async () => {
                          await call(api.POST('/admin/v1/keys/{id}/revoke', { params: { path: { id: k.id } } }));
                          keys.reload();
                        }}
                      />
                    )}
                  </Cell>
                </tr>
              ))}
            </Table>
          )
        }
      </Loaded>
    </Page>
  );
}

type AdminReport = Schemas['AdminUsageReport'];

/** One line per day: users, requests, errors, billed tokens, cost (exact, empty when unknown), unpriced requests. */
export function adminUsageCsv(r: AdminReport): string {
  return csv(
    ['date', 'users', 'requests', 'errors', 'billed_tokens', 'cost', 'unpriced_requests'],
    r.by_day.map((d) => [d.date, d.users, d.requests, d.errors, d.billed_tokens, csvUsd(d.cost), d.unpriced_requests]),
  );
}

export function AdminUsage(_: { session: Session }) {
  const [days, setDays] = useState(30);
  const state = useLoad(() => call(api.GET('/admin/v1/usage', { params: { query: { start: utcDay(Date.now() - (days - 1) * DAY), end: utcDay(Date.now()), limit: 10 } } })), [days]);
  const chart = useMemo(() => {
    const r = state.data;
    if (!r) return null;
    return {
      labels: r.by_day.map((d) => d.date.slice(5)),
      billed: [{ label: 'billed tokens', values: r.by_day.map((d) => d.billed_tokens) }],
      // Parsed for plotting only; the figures shown are the API's decimals.
      cost: [{ label: 'cost', values: r.by_day.map((d) => dollars(d.cost)), colour: '#009E73' }],
      requests: [
        { label: 'successful', values: r.by_day.map((d) => d.requests - d.errors) },
        { label: 'errors', values: r.by_day.map((d) => d.errors), colour: '#C0392B' },
      ],
    };
  }, [state.data]);
  return (
    <Page title="All usage" intro="The ledger across every user. Cost is in US dollars, at the models’ prices; days are UTC.">
      <div class="segmented" role="group" aria-label="Last days">
        {[7, 30, 90].map((d) => (
          <button type="button" class={days === d ? '' : 'secondary'} aria-pressed={days === d} onClick={() => setDays(d)}>
            {d} days
          </button>
        ))}
      </div>
      <Loaded state={state} what="usage">
        {(r) => {
          const emails = new Map(r.top_users.map((u) => [u.user_id, u.email]));
          // The table shows the days with requests, newest first; the CSV has every day.
          const active = r.by_day.filter((d) => d.requests > 0).reverse();
          return (
            <>
              <div class="totals">
                <div>
                  <span class="big" id="admin-total-billed">
                    {num(r.totals.billed_tokens)}
                  </span>
                  billed tokens
                </div>
                <div>
                  <span class="big" id="admin-total-cost" title={r.totals.cost === null ? 'No known price' : `$${r.totals.cost}`}>
                    {usd(r.totals.cost)}
                  </span>
                  cost
                  {r.totals.unpriced_requests > 0 && <span class="totals-note">{unpricedText(r.totals.unpriced_requests)}</span>}
                </div>
                <div>
                  <span class="big">{num(r.totals.requests)}</span>requests
                </div>
                <div>
                  <span class="big">{num(r.totals.errors)}</span>errors
                </div>
              </div>
              {chart && (
                <div class="charts">
                  <StackedBars id="admin-billed" title="Billed tokens per day" unit="billed tokens" labels={chart.labels} series={chart.billed} />
                  <StackedBars
                    id="admin-cost"
                    title="Cost per day"
                    unit="US dollars"
                    labels={chart.labels}
                    series={chart.cost}
                    format={usdOf}
                    total={usd(r.totals.cost)}
                    note={r.totals.unpriced_requests > 0 && <>Not counted: {unpricedText(r.totals.unpriced_requests)}.</>}
                  />
                  <StackedBars id="admin-requests" title="Requests per day" unit="requests" labels={chart.labels} series={chart.requests} />
                </div>
              )}
              <div class="section-head">
                <h2>Per day</h2>
                <button type="button" class="secondary small" id="admin-csv" onClick={() => download(`all-usage-${r.period.start}-${r.period.end}.csv`, adminUsageCsv(r))}>
                  Download CSV
                </button>
              </div>
              {active.length === 0 ? (
                <p class="muted">No requests in these days.</p>
              ) : (
                <Table caption="Usage per day with requests, newest first" columns={['Day', 'Users', 'Requests', 'Errors', 'Billed tokens', 'Cost']} numeric={['Users', 'Requests', 'Errors', 'Billed tokens', 'Cost']}>
                  {active.map((d) => (
                    <tr id={`admin-day-${d.date}`}>
                      <Cell label="Day">{d.date}</Cell>
                      <NumCell label="Users" value={d.users} />
                      <CountedCells row={d} />
                    </tr>
                  ))}
                </Table>
              )}
              {/* Side by side only where both tables fit (their cost columns make them wide). */}
              <div class="two wide">
                <TopTable title="Top users" first="User" rows={r.top_users.map((u) => ({ name: u.email ?? u.user_id, ...u }))} />
                <TopTable title="Top models" first="Model" rows={r.top_models.map((m) => ({ name: m.model, ...m }))} code />
              </div>
              {r.totals.unpriced_requests > 0 && <UnpricedNote />}
              <section aria-labelledby="admin-alerts-h" id="admin-budget-alerts">
                <h2 id="admin-alerts-h">Budget alerts</h2>
                <BudgetAlerts
                  alerts={r.budget_alerts}
                  keyName={(id) => id}
                  who={(id) => emails.get(id) ?? <small>{id}</small>}
                  empty={<p>No spend budget has crossed an alert threshold yet (plans’ budgets, `budget_alerts` in the configuration).</p>}
                />
              </section>
            </>
          );
        }}
      </Loaded>
    </Page>
  );
}

type Counted = { name: string; requests: number; errors: number; billed_tokens: number; cost: string | null; unpriced_requests: number };

/** Users or models by billed tokens. */
function TopTable({ title, first, rows, code }: { title: string; first: string; rows: Counted[]; code?: boolean }) {
  return (
    <section>
      <h2>{title}</h2>
      <Table caption={`${title} by billed tokens`} columns={[first, 'Requests', 'Errors', 'Billed tokens', 'Cost']} numeric={['Requests', 'Errors', 'Billed tokens', 'Cost']}>
        {rows.map((r) => (
          <tr>
            <Cell label={first} class={code ? 'wide' : undefined}>{code ? <ModelId id={r.name} /> : r.name}</Cell>
            <CountedCells row={r} />
          </tr>
        ))}
      </Table>
    </section>
  );
}

const availabilityKind = (a: number | null) => (a === null ? 'neutral' : a >= 0.99 ? 'ok' : a >= 0.5 ? 'warn' : 'bad');
const ms = (v: number | null) => (v === null ? null : Math.round(v));

/** An upstream's or a key's traffic: its share, attempts, errors, availability and median latency. */
function TrafficCells({ t }: { t: { share: number | null; requests: number; errors: number; availability: number | null; latency_ms_p50: number | null } }) {
  return (
    <>
      <Cell label="Share" class="num">
        <span class="nowrap">{pct(t.share)}</span>
      </Cell>
      <NumCell label="Attempts" value={t.requests} />
      <NumCell label="Errors" value={t.errors} />
      <Cell label="Availability">
        <Badge kind={availabilityKind(t.availability)}>{pct(t.availability, 2)}</Badge>
      </Cell>
      <NumCell label="Median latency" value={ms(t.latency_ms_p50)} unit="ms" />
    </>
  );
}

export function AdminHealth(_: { session: Session }) {
  const state = useLoad(() => call(api.GET('/v1/models/status', { params: { query: { window: '24h' } } })));
  return (
    <Page
      title="Upstream health"
      intro="Every upstream attempt of the last 24 hours, per model, upstream and pool key (failovers included): each upstream's weight and share of the model's attempts, its circuit breaker, and each key's share of the upstream's attempts and cool-down."
    >
      <Loaded state={state} what="health">
        {(r) => {
          if (!r.data.length) return <EmptyState title="No models configured" />;
          const quiet = r.data.every((m) => m.requests === 0);
          return (
            <>
              {quiet && <p class="muted">No upstream traffic in the last 24 hours: the configured upstreams are listed with their breakers and keys.</p>}
              <Table
                caption="Upstreams and their keys per model, last 24 hours"
                columns={['Upstream', 'Share', 'Attempts', 'Errors', 'Availability', 'Median latency', 'State', 'Last error']}
                numeric={['Share', 'Attempts', 'Errors', 'Median latency']}
              >
                {r.data.flatMap((m) => [
                  // The model: its id, its strategy; its upstreams and their keys in the rows under it.
                  <tr id={`health-${m.model}`}>
                    <td data-label="Model" colSpan={8} class="wide">
                      <div>
                        <strong>
                          <ModelId id={m.model} />
                        </strong>{' '}
                        {m.status === 'misconfigured' && <Badge kind="bad">misconfigured</Badge>} <span class="muted">strategy: {strategyText[m.strategy]}</span>
                      </div>
                    </td>
                  </tr>,
                  ...m.upstreams.flatMap((u) => [
                    <tr id={`health-${m.model}-${u.provider}-${u.upstream_model}`}>
                      <Cell label="Upstream">
                        <strong>{u.provider}</strong>
                        <span class="visually-hidden"> for {m.model}</span>
                        <small class="cell-note">
                          model <span class="nowrap">{u.upstream_model}</span> · <span class="nowrap">weight {u.weight}</span>
                        </small>
                      </Cell>
                      <TrafficCells t={u} />
                      <Cell label="State">
                        <BreakerState breaker={u.breaker} />
                        {u.in_flight > 0 && <small class="cell-note">{num(u.in_flight)} in flight on this instance</small>}
                      </Cell>
                      <Cell label="Last error">{u.last_error ? <>{u.last_error} <span class="nowrap">({when(u.last_error_at)})</span></> : <span class="muted">none</span>}</Cell>
                    </tr>,
                    ...u.keys.map((k) => (
                      <tr id={`health-${m.model}-${k.key}`}>
                        <Cell label="Key">
                          <span aria-hidden="true">↳ </span>
                          <span class="visually-hidden">Key </span>
                          <code>{k.key}</code>
                        </Cell>
                        <TrafficCells t={k} />
                        <Cell label="State">
                          <KeyState k={k} />
                          {k.in_flight > 0 && <small class="cell-note">{num(k.in_flight)} in flight on this instance</small>}
                        </Cell>
                        <td aria-hidden="true" />
                      </tr>
                    )),
                  ]),
                ])}
              </Table>
            </>
          );
        }}
      </Loaded>
    </Page>
  );
}
