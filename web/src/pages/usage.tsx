import { useMemo, useState } from 'preact/hooks';
import { api, call, type Schemas, type Session } from '../api.ts';
import { StackedBars, colourOf, type Series } from '../chart.tsx';
import { DAY, dollars, num, usd, usdOf, utcDay } from '../format.ts';
import { BudgetAlerts, Budgets, csv, csvUsd, download, unpricedText } from '../money.tsx';
import { Cell, CountedCells, EmptyState, Field, Loaded, ModelId, NumCell, Page, Table, UnpricedNote, UsdCell, useLoad } from '../ui.tsx';

type Report = Schemas['UsageReport'];
type Key = Schemas['ApiKey'];

/**
 * The report's models, most billed first: the order of every plot, so a model has the same colour
 * on each.
 */
const modelOrder = (report: Report) =>
  [...report.by_model].sort((a, b) => b.billed_tokens - a.billed_tokens || b.requests - a.requests || (a.model < b.model ? -1 : 1)).map((m) => m.model);

/** Per-model series over the report's days. */
function seriesOf(report: Report, pick: 'billed_tokens' | 'requests'): Series[] {
  return modelOrder(report).map((model) => ({ label: model, values: report.by_day.map((d) => d.models.find((m) => m.model === model)?.[pick] ?? 0) }));
}

/**
 * Cost per day of the models with a known price (parsed for plotting only), each in its colour on
 * the other plots; models without one are left out (the note under the plot names them).
 */
function costSeries(report: Report): Series[] {
  const priced = new Set(report.by_model.filter((m) => m.cost !== null).map((m) => m.model));
  return modelOrder(report).flatMap((model, i) =>
    priced.has(model) ? [{ label: model, colour: colourOf(i), values: report.by_day.map((d) => dollars(d.models.find((m) => m.model === model)?.cost)) }] : [],
  );
}

/** Token buckets of a day and model, in the CSV's order (each among the prompt or completion tokens). */
const BUCKET_COLUMNS = ['cache_write_tokens', 'cache_write_1h_tokens', 'audio_input_tokens', 'image_input_tokens', 'audio_output_tokens', 'image_output_tokens', 'web_search_calls'] as const;

/**
 * One line per day and model: the figures the plots show, `cost` exact (empty when unknown), the
 * requests without a known price (not in `cost`), then the buckets.
 */
export function usageCsv(report: Report): string {
  return csv(
    ['date', 'model', 'requests', 'billed_tokens', 'cost', 'unpriced_requests', ...BUCKET_COLUMNS],
    report.by_day.flatMap((d) => d.models.map((m) => [d.date, m.model, m.requests, m.billed_tokens, csvUsd(m.cost), m.unpriced_requests, ...BUCKET_COLUMNS.map((c) => m[c])])),
  );
}

/** A key's name and prefix, or its id when it is not among the user's keys (an app's grant). */
const keyLabel = (keys: Key[] | undefined) => (id: string) => {
  const k = keys?.find((x) => x.id === id);
  return k ? `${k.name ?? 'unnamed'} (${k.prefix}…)` : id;
};

const PRESETS = [7, 30, 90];

export function Usage(_: { session: Session }) {
  const todayT = Date.now();
  const [range, setRange] = useState({ start: utcDay(todayT - 6 * DAY), end: utcDay(todayT) });
  const state = useLoad(() => call(api.GET('/v1/usage', { params: { query: range } })), [range.start, range.end]);
  // For the keys' names (per-key table, alerts); the report shows without them.
  const keys = useLoad(async () => (await call(api.GET('/v1/keys'))).data);
  const preset = (days: number) => setRange({ start: utcDay(todayT - (days - 1) * DAY), end: utcDay(todayT) });
  const active = PRESETS.find((d) => range.end === utcDay(todayT) && range.start === utcDay(todayT - (d - 1) * DAY));
  return (
    <Page title="Usage" intro="Billed tokens count against your daily quota: the model’s tokens × its multiplier. Cost is in US dollars, at the models’ prices. Days are UTC.">
      <form class="range" onSubmit={(e) => e.preventDefault()} aria-label="Period">
        <div class="segmented" role="group" aria-label="Last days">
          {PRESETS.map((d) => (
            <button type="button" class={active === d ? '' : 'secondary'} aria-pressed={active === d} onClick={() => preset(d)}>
              {d} days
            </button>
          ))}
        </div>
        <Field id="start" label="From">
          <input id="start" type="date" value={range.start} max={range.end} onChange={(e) => (e.target as HTMLInputElement).value && setRange({ ...range, start: (e.target as HTMLInputElement).value })} />
        </Field>
        <Field id="end" label="To">
          <input id="end" type="date" value={range.end} min={range.start} onChange={(e) => (e.target as HTMLInputElement).value && setRange({ ...range, end: (e.target as HTMLInputElement).value })} />
        </Field>
      </form>
      <Loaded state={state} what="usage">
        {(report) => <UsageReport report={report} keys={keys.data} />}
      </Loaded>
    </Page>
  );
}

function UsageReport({ report, keys }: { report: Report; keys: Key[] | undefined }) {
  const labels = useMemo(() => report.by_day.map((d) => d.date.slice(5)), [report]);
  const billed = useMemo(() => seriesOf(report, 'billed_tokens'), [report]);
  const requests = useMemo(() => seriesOf(report, 'requests'), [report]);
  const cost = useMemo(() => costSeries(report), [report]);
  const { start, end } = report.period;
  const { totals } = report;
  const unpricedModels = report.by_model.filter((m) => m.unpriced_requests > 0).map((m) => m.model);
  const nameOf = keyLabel(keys);
  // The plan's budgets, a key's own cap or the user's own budget: whichever holds.
  const { key: keyBudgets, user: userBudgets } = report.budgets;
  const hasBudget = [keyBudgets.daily, keyBudgets.monthly, userBudgets.daily, userBudgets.monthly].some((b) => b !== null);
  return (
    <>
      <div class="totals" aria-label="Totals for the period">
        <div>
          <span class="big" id="total-billed">
            {num(totals.billed_tokens)}
          </span>
          billed tokens
        </div>
        <div>
          <span class="big" id="total-cost" title={totals.cost === null ? 'No known price' : `$${totals.cost}`}>
            {usd(totals.cost)}
          </span>
          cost
          {totals.unpriced_requests > 0 && (
            <span class="totals-note" id="total-unpriced">
              {unpricedText(totals.unpriced_requests)}
            </span>
          )}
        </div>
        <div>
          <span class="big" id="total-requests">
            {num(totals.requests)}
          </span>
          requests
        </div>
        <div>
          <span class="big">{num(totals.errors)}</span>
          errors
        </div>
      </div>
      <Budgets budgets={report.budgets} keys={keys ? keys.filter((k) => !k.revoked_at).length : null} />
      {totals.requests === 0 ? (
        <EmptyState title="No requests in this period">
          <p>
            Requests made with your keys appear here within seconds. No key yet? <a href="/keys">Create one</a>.
          </p>
        </EmptyState>
      ) : (
        <>
          <div class="charts">
            <StackedBars id="billed-chart" title="Billed tokens per day, by model" unit="billed tokens" labels={labels} series={billed} />
            {cost.length > 0 ? (
              <StackedBars
                id="cost-chart"
                title="Cost per day, by model"
                unit="US dollars"
                labels={labels}
                series={cost}
                format={usdOf}
                total={usd(totals.cost)}
                note={
                  totals.unpriced_requests > 0 && (
                    <>
                      Not counted: {unpricedText(totals.unpriced_requests)} ({unpricedModels.join(', ')}).
                    </>
                  )
                }
              />
            ) : (
              <figure class="chart" id="cost-chart-none">
                <figcaption>Cost per day, by model</figcaption>
                <p class="muted">No cost to plot: none of these requests’ models has a known price ({unpricedText(totals.unpriced_requests)}).</p>
              </figure>
            )}
            <StackedBars id="requests-chart" title="Requests per day, by model" unit="requests" labels={labels} series={requests} />
          </div>
          <div class="section-head">
            <h2>Per model</h2>
            <button type="button" class="secondary small" id="csv" onClick={() => download(`usage-${start}-${end}.csv`, usageCsv(report))}>
              Download CSV
            </button>
          </div>
          <Table
            caption={`Usage per model, ${start} to ${end}`}
            columns={['Model', 'Requests', 'Errors', 'Prompt tokens', 'Completion tokens', 'Billed tokens', 'Cost']}
            numeric={['Requests', 'Errors', 'Prompt tokens', 'Completion tokens', 'Billed tokens', 'Cost']}
          >
            {report.by_model.map((m) => (
              <tr>
                <Cell label="Model" class="wide">
                  <ModelId id={m.model} />
                  {m.metered && (
                    <small class="muted">
                      {' '}
                      {num(Math.round(m.metered.quantity * 100) / 100)} {m.metered.unit.replace('_', ' ')}s
                    </small>
                  )}
                </Cell>
                <NumCell label="Requests" value={m.requests} />
                <NumCell label="Errors" value={m.errors} />
                <NumCell label="Prompt tokens" value={m.prompt_tokens} />
                <NumCell label="Completion tokens" value={m.completion_tokens} />
                <NumCell label="Billed tokens" value={m.billed_tokens} />
                <UsdCell label="Cost" value={m.cost} unpriced={m.unpriced_requests} />
              </tr>
            ))}
          </Table>
          {totals.unpriced_requests > 0 && <UnpricedNote />}
          {report.by_key.length > 0 && (
            <section aria-labelledby="per-key-h">
              <h2 id="per-key-h">Per key</h2>
              <Table caption={`Usage per key, ${start} to ${end}`} columns={['Key', 'Requests', 'Errors', 'Billed tokens', 'Cost']} numeric={['Requests', 'Errors', 'Billed tokens', 'Cost']}>
                {report.by_key.map((k) => (
                  <tr id={`usage-key-${k.key_id}`}>
                    <Cell label="Key">{nameOf(k.key_id)}</Cell>
                    <CountedCells row={k} />
                  </tr>
                ))}
              </Table>
            </section>
          )}
        </>
      )}
      {(hasBudget || report.budget_alerts.length > 0) && (
        <section aria-labelledby="alerts-h" id="budget-alerts">
          <h2 id="alerts-h">Budget alerts</h2>
          <BudgetAlerts
            alerts={report.budget_alerts}
            keyName={nameOf}
            empty={<p>An alert is recorded here when your spend crosses one of the operator’s thresholds of a budget (once per threshold, day or month).</p>}
          />
        </section>
      )}
    </>
  );
}
