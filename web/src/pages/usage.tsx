import { useMemo, useState } from 'preact/hooks';
import { api, call, type Schemas, type Session } from '../api.ts';
import { StackedBars, type Series } from '../chart.tsx';
import { DAY, num, utcDay } from '../format.ts';
import { Cell, EmptyState, Field, Loaded, ModelId, NumCell, Page, Table, useLoad } from '../ui.tsx';

type Report = Schemas['UsageReport'];

/**
 * Per-model series over the report's days. Models are in one order on both plots (most billed
 * first), so a model has the same colour on each.
 */
function seriesOf(report: Report, pick: 'billed_tokens' | 'requests'): Series[] {
  const models = [...report.by_model].sort((a, b) => b.billed_tokens - a.billed_tokens || b.requests - a.requests || (a.model < b.model ? -1 : 1)).map((m) => m.model);
  return models.map((model) => ({ label: model, values: report.by_day.map((d) => d.models.find((m) => m.model === model)?.[pick] ?? 0) }));
}

const csvCell = (v: string | number) => (typeof v === 'number' ? String(v) : /[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

/** One line per day and model: the figures the plots show. */
export function usageCsv(report: Report): string {
  const lines = ['date,model,requests,billed_tokens'];
  for (const d of report.by_day) for (const m of d.models) lines.push([d.date, m.model, m.requests, m.billed_tokens].map(csvCell).join(','));
  return lines.join('\n') + '\n';
}

function download(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
  const a = Object.assign(document.createElement('a'), { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

const PRESETS = [7, 30, 90];

export function Usage(_: { session: Session }) {
  const todayT = Date.now();
  const [range, setRange] = useState({ start: utcDay(todayT - 6 * DAY), end: utcDay(todayT) });
  const state = useLoad(() => call(api.GET('/v1/usage', { params: { query: range } })), [range.start, range.end]);
  const preset = (days: number) => setRange({ start: utcDay(todayT - (days - 1) * DAY), end: utcDay(todayT) });
  const active = PRESETS.find((d) => range.end === utcDay(todayT) && range.start === utcDay(todayT - (d - 1) * DAY));
  return (
    <Page title="Usage" intro="Billed tokens count against your daily quota: the model’s tokens × its multiplier. Days are UTC.">
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
        {(report) => <UsageReport report={report} />}
      </Loaded>
    </Page>
  );
}

function UsageReport({ report }: { report: Report }) {
  const labels = useMemo(() => report.by_day.map((d) => d.date.slice(5)), [report]);
  const billed = useMemo(() => seriesOf(report, 'billed_tokens'), [report]);
  const requests = useMemo(() => seriesOf(report, 'requests'), [report]);
  const { start, end } = report.period;
  return (
    <>
      <div class="totals" aria-label="Totals for the period">
        <div>
          <span class="big" id="total-billed">
            {num(report.totals.billed_tokens)}
          </span>
          billed tokens
        </div>
        <div>
          <span class="big" id="total-requests">
            {num(report.totals.requests)}
          </span>
          requests
        </div>
        <div>
          <span class="big">{num(report.totals.errors)}</span>
          errors
        </div>
      </div>
      {report.totals.requests === 0 ? (
        <EmptyState title="No requests in this period">
          <p>
            Requests made with your keys appear here within seconds. No key yet? <a href="/keys">Create one</a>.
          </p>
        </EmptyState>
      ) : (
        <>
          <div class="charts">
            <StackedBars id="billed-chart" title="Billed tokens per day, by model" unit="billed tokens" labels={labels} series={billed} />
            <StackedBars id="requests-chart" title="Requests per day, by model" unit="requests" labels={labels} series={requests} />
          </div>
          <div class="section-head">
            <h2>Per model</h2>
            <button type="button" class="secondary small" id="csv" onClick={() => download(`usage-${start}-${end}.csv`, usageCsv(report))}>
              Download CSV
            </button>
          </div>
          <Table caption={`Usage per model, ${start} to ${end}`} columns={['Model', 'Requests', 'Errors', 'Prompt tokens', 'Completion tokens', 'Billed tokens']} numeric={['Requests', 'Errors', 'Prompt tokens', 'Completion tokens', 'Billed tokens']}>
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
              </tr>
            ))}
          </Table>
        </>
      )}
    </>
  );
}
