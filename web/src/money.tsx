// Spend: budgets as meters, budget alerts as a table, the note on requests without a known price,
// and the CSV files. Amounts are the API's exact decimal strings (format.ts shows them).
import type { ComponentChildren } from 'preact';
import type { Schemas } from './api.ts';
import { decimalText, dollars, num, usd, when } from './format.ts';
import { Badge, Cell, EmptyState, Meter, Table } from './ui.tsx';

type Budget = Schemas['Budgets']['key']['daily'];
type Alert = Schemas['BudgetAlert'];

/** "2 requests without a known price" (not in the cost). */
export const unpricedText = (n: number) => `${num(n)} request${n === 1 ? '' : 's'} without a known price`;

/** A budget's spend against its limit, with what is left and when it resets. */
function BudgetMeter({ id, label, budget }: { id: string; label: string; budget: NonNullable<Budget> }) {
  return (
    <Meter
      id={id}
      label={label}
      used={dollars(budget.spent_usd)}
      limit={dollars(budget.limit_usd)}
      shown={{ used: usd(budget.spent_usd), limit: usd(budget.limit_usd) }}
      detail={
        <>
          {usd(budget.remaining_usd)} left · resets {when(budget.reset_at)}
        </>
      }
    />
  );
}

/**
 * The spend budgets now (whatever period the page shows): the keys' (the plan's, or a key's own
 * cap where lower) and the user's (the plan's, or their own), per UTC day and month. Nothing when
 * none holds.
 */
export function Budgets({ budgets, keys }: { budgets: Schemas['Budgets']; keys: number | null }) {
  const { key, user } = budgets;
  if (!key.daily && !key.monthly && !user.daily && !user.monthly) return null;
  return (
    <section aria-labelledby="budgets-h" id="budgets">
      <h2 id="budgets-h">Spend budgets</h2>
      <div class="cards">
        {(key.daily || key.monthly) && (
          <div class="card">
            <h3>{keys !== null && keys > 1 ? `Your ${keys} keys together (each key’s budget, summed: the plan’s, or the key’s own cap where lower)` : 'Per key'}</h3>
            {key.daily && <BudgetMeter id="budget-key-daily" label="Today" budget={key.daily} />}
            {key.monthly && <BudgetMeter id="budget-key-monthly" label="This month" budget={key.monthly} />}
          </div>
        )}
        {(user.daily || user.monthly) && (
          <div class="card">
            <h3>You, over all keys and apps</h3>
            {user.daily && <BudgetMeter id="budget-user-daily" label="Today" budget={user.daily} />}
            {user.monthly && <BudgetMeter id="budget-user-monthly" label="This month" budget={user.monthly} />}
          </div>
        )}
      </div>
      <p class="note">Spend includes the most that requests in flight can cost. Days and months are UTC.</p>
    </section>
  );
}

function Delivery({ alert }: { alert: Alert }) {
  const tries = `${num(alert.attempts)} attempt${alert.attempts === 1 ? '' : 's'}`;
  switch (alert.delivery) {
    case 'delivered':
      return (
        <>
          <Badge kind="ok">delivered</Badge> <small class="muted nowrap">{when(alert.delivered_at)}</small>
        </>
      );
    case 'pending':
      return (
        <>
          <Badge kind="info">pending</Badge> {alert.attempts > 0 && <small class="muted">{tries} so far</small>}
        </>
      );
    case 'failed':
      return (
        <>
          <Badge kind="bad">failed</Badge> <small class="muted">after {tries}</small>
        </>
      );
    default:
      return (
        <>
          <Badge kind="neutral">not sent</Badge> <small class="muted nowrap">no webhook</small>
        </>
      );
  }
}

/**
 * Budget alerts, newest first. `keyName` names a key (else its id); `who` adds a column for the
 * user (the operator's view).
 */
export function BudgetAlerts({ alerts, keyName, who, empty }: { alerts: Alert[]; keyName: (id: string) => string; who?: (userId: string) => ComponentChildren; empty: ComponentChildren }) {
  if (alerts.length === 0) return <EmptyState title="No budget alerts">{empty}</EmptyState>;
  const columns = ['When', ...(who ? ['User'] : []), 'Budget', 'Threshold', 'Spent / limit', 'Delivery'];
  return (
    <Table caption="Budget alerts, newest first" columns={columns} numeric={['Threshold', 'Spent / limit']}>
      {alerts.map((a) => (
        <tr id={`alert-${a.id}`}>
          <Cell label="When">{when(a.created_at)}</Cell>
          {who && <Cell label="User">{who(a.user_id)}</Cell>}
          <Cell label="Budget">
            {a.period === 'daily' ? 'Daily' : 'Monthly'} ({a.period_start}),{' '}
            {a.scope === 'key' ? <>key {a.key_id ? keyName(a.key_id) : 'unknown'}</> : who ? 'all keys and apps' : 'you, over all keys and apps'}
          </Cell>
          <td data-label="Threshold" class="num">
            {a.threshold_percent}%
          </td>
          <td data-label="Spent / limit" class="num">
            <div>
              <span class="nowrap">{usd(a.spent_usd)}</span> / <span class="nowrap">{usd(a.limit_usd)}</span>
            </div>
          </td>
          <Cell label="Delivery">
            <Delivery alert={a} />
          </Cell>
        </tr>
      ))}
    </Table>
  );
}

// ---- CSV ------------------------------------------------------------------------------------

const csvCell = (v: string | number | null) => (v === null ? '' : typeof v === 'number' ? String(v) : /[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

/** A CSV file: a header line, then one line per row; a cost is its exact decimal (empty for null). */
export function csv(header: string[], rows: (string | number | null)[][]): string {
  return [header.join(','), ...rows.map((r) => r.map(csvCell).join(','))].join('\n') + '\n';
}

/** An amount for a CSV cell: the exact decimal without superfluous zeros; null stays empty. */
export const csvUsd = (v: string | null) => (v === null ? null : decimalText(v));

export function download(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
  const a = Object.assign(document.createElement('a'), { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
