import { useState } from 'preact/hooks';
import { api, call, loadCatalog, type Schemas, type Session } from '../api.ts';
import { num, pct, when } from '../format.ts';
import { Badge, Loaded, ModelId, Page, useLoad } from '../ui.tsx';
import { CatalogSetupNotice } from './setup.tsx';

type Entry = Schemas['CatalogEntry'];
type Status = Schemas['ModelStatus'];
type Window = '24h' | '7d' | '30d';
const WINDOWS: { id: Window; label: string }[] = [
  { id: '24h', label: '24 hours' },
  { id: '7d', label: '7 days' },
  { id: '30d', label: '30 days' },
];

const flag = (v: boolean | null) => (v === null ? 'unknown' : v ? 'yes' : 'no');

function Capabilities({ m }: { m: Entry }) {
  const caps: [string, boolean | null][] = [
    ['vision', m.supports_vision],
    ['tools', m.supports_tools],
    ['reasoning', m.supports_reasoning],
    ['JSON mode', m.supports_json_mode],
    ['audio input', m.supports_audio_input],
    ['image output', m.supports_image_output],
    ['streaming', m.supports_streaming],
  ];
  return (
    <ul class="badges" aria-label={`Capabilities of ${m.id}`}>
      {caps.map(([name, v]) => (
        <li>
          <Badge kind={v === null ? 'neutral' : v ? 'ok' : 'warn'}>
            {name}: {flag(v)}
          </Badge>
        </li>
      ))}
    </ul>
  );
}

type Cell = { start: string; requests: number; errors: number };
/** At most 48 cells: hourly buckets of 7 days are shown 4 hours to a cell. */
function cellsOf(history: Status['history']): Cell[] {
  const size = Math.ceil(history.length / 48);
  const out: Cell[] = [];
  for (let i = 0; i < history.length; i += size) {
    const group = history.slice(i, i + size);
    out.push({ start: group[0]!.start, requests: group.reduce((n, b) => n + b.requests, 0), errors: group.reduce((n, b) => n + b.errors, 0) });
  }
  return out;
}

function level(c: Cell): string {
  if (!c.requests) return 'none';
  const a = (c.requests - c.errors) / c.requests;
  return a >= 0.99 ? 'up' : a >= 0.5 ? 'degraded' : 'down';
}

export function AvailabilityBars({ status, window }: { status: Status | undefined; window: Window }) {
  if (!status) return <p class="muted">No health data.</p>;
  const cells = cellsOf(status.history);
  return (
    <div class="availability">
      <div class="bars" role="img" aria-label={`${status.model}: availability ${pct(status.availability, 2)} over ${window}, ${num(status.requests)} upstream attempts`}>
        {cells.map((c) => (
          <span class={`bar ${level(c)}`} title={`${when(c.start)}: ${c.requests ? `${pct((c.requests - c.errors) / c.requests)} of ${c.requests}` : 'no traffic'}`} />
        ))}
      </div>
      <div class="bars-legend">
        <span>{window} ago</span>
        <span>
          {status.availability === null ? 'no traffic' : `${pct(status.availability, 2)} available`} · {num(status.errors)} error{status.errors === 1 ? '' : 's'}{status.last_error ? ` · last: ${status.last_error} ${when(status.last_error_at)}` : ''}
        </span>
        <span>now</span>
      </div>
    </div>
  );
}

type Upstream = Status['upstreams'][number];
type PoolKey = Upstream['keys'][number];

/** "2026-05-01 10:05:30 UTC": cool-downs last seconds, so the seconds are shown. */
const at = (iso: string) => `${new Date(iso).toISOString().slice(0, 19).replace('T', ' ')} UTC`;

export const strategyText: Record<Status['strategy'], string> = { failover: 'failover', weighted: 'weighted', 'least-latency': 'least latency', 'least-busy': 'least busy' };

/** An upstream's circuit breaker: closed, open (until when, why) or half-open (its probe decides). */
export function BreakerState({ breaker }: { breaker: Upstream['breaker'] }) {
  if (breaker.state === 'closed')
    return (
      <span class="nowrap">
        <Badge kind="ok">breaker closed</Badge>
      </span>
    );
  return (
    <>
      <span class="nowrap">
        <Badge kind={breaker.state === 'open' ? 'bad' : 'warn'}>{breaker.state === 'open' ? 'breaker open' : 'breaker half-open'}</Badge>
      </span>
      <small class="cell-note">
        {breaker.state === 'open' && breaker.until ? `until ${at(breaker.until)}` : 'one probe request decides'}
        {breaker.reason ? ` · ${breaker.reason}` : ''}
      </small>
    </>
  );
}

/** A pool key: ready, or cooling down (until when, why). */
export function KeyState({ k }: { k: PoolKey }) {
  if (k.state === 'ready') return <Badge kind="ok">ready</Badge>;
  return (
    <>
      <span class="nowrap">
        <Badge kind="warn">cooling down</Badge>
      </span>
      <small class="cell-note">
        {k.until ? `until ${at(k.until)}` : ''}
        {k.reason ? ` · ${k.reason}` : ''}
      </small>
    </>
  );
}

const latency = (ms: number | null) => (ms === null ? 'no traffic' : `${Math.round(ms).toLocaleString('en-US')}\u00a0ms`);

/** The model's upstreams in its strategy's terms: weight, share of the attempts, breaker, and each pool key's share and state. */
function Upstreams({ status }: { status: Status }) {
  const open = status.upstreams.filter((u) => u.breaker.state !== 'closed').length;
  const cooling = status.upstreams.reduce((n, u) => n + u.keys.filter((k) => k.state === 'cooling_down').length, 0);
  const n = status.upstreams.length;
  return (
    <details class="upstreams">
      <summary>
        {n} upstream{n === 1 ? '' : 's'}, strategy: {strategyText[status.strategy]}
        {open > 0 && (
          <>
            {' '}
            <Badge kind="bad">{open === 1 ? 'breaker open' : `${open} breakers open`}</Badge>
          </>
        )}
        {cooling > 0 && (
          <>
            {' '}
            <Badge kind="warn">{cooling === 1 ? 'key cooling down' : `${cooling} keys cooling down`}</Badge>
          </>
        )}
      </summary>
      <ul class="plain small">
        {status.upstreams.map((u) => (
          <li>
            <strong>{u.provider}</strong> <code>{u.upstream_model}</code> · weight {u.weight} · {u.share === null ? 'no traffic' : `${pct(u.share)} of attempts`} · <BreakerState breaker={u.breaker} />
            {u.keys.length > 0 && (
              <ul aria-label={`Keys of ${u.provider}`}>
                {u.keys.map((k) => (
                  <li>
                    <code>{k.key}</code> ·{' '}
                    {k.requests === 0 ? (
                      'no attempts'
                    ) : (
                      <>
                        {pct(k.share)} · {num(k.requests)} attempt{k.requests === 1 ? '' : 's'} · {num(k.errors)} error{k.errors === 1 ? '' : 's'} · median {latency(k.latency_ms_p50)}
                      </>
                    )}{' '}
                    · <KeyState k={k} />
                  </li>
                ))}
              </ul>
            )}
          </li>
        ))}
      </ul>
    </details>
  );
}

const statusBadge: Record<Status['status'], 'ok' | 'warn' | 'bad' | 'neutral'> = { operational: 'ok', degraded: 'warn', down: 'bad', unknown: 'neutral', misconfigured: 'bad' };

/** Label and value kept together: on a narrow card a pair wraps as one. */
function Fact({ label, children }: { label: string; children: preact.ComponentChildren }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

export function Models({ session }: { session: Session }) {
  const [window, setWindow] = useState<Window>('24h');
  const catalog = useLoad(loadCatalog);
  const health = useLoad(() => call(api.GET('/v1/models/status', { params: { query: { window } } })), [window]);
  const [filter, setFilter] = useState('');
  const byModel = new Map((health.data?.data ?? []).map((s) => [s.model, s]));
  return (
    <Page title="Models" intro="Every model this gateway serves, what it can do (unknown where no source says), and how its upstreams have answered.">
      {session.catalog.setup && <CatalogSetupNotice setup={session.catalog.setup} />}
      {/* Nothing to filter or chart in an empty catalog. */}
      {!session.catalog.setup && (
        <div class="toolbar">
          <div class="segmented" role="group" aria-label="Health history">
            {WINDOWS.map((w) => (
              <button type="button" class={window === w.id ? '' : 'secondary'} aria-pressed={window === w.id} onClick={() => setWindow(w.id)}>
                {w.label}
              </button>
            ))}
          </div>
          <div class="field inline">
            <label for="model-filter">Filter</label>
            <input id="model-filter" type="search" value={filter} placeholder="model or provider" onInput={(e) => setFilter((e.target as HTMLInputElement).value)} />
          </div>
        </div>
      )}
      <Loaded state={catalog} what="the catalog">
        {(all) => {
          const models = all.filter((m) => !filter || `${m.id} ${m.owned_by} ${m.endpoint}`.toLowerCase().includes(filter.toLowerCase()));
          // An empty catalog is explained by the notice above; a filter that matches nothing says so.
          if (!models.length) return all.length ? <p class="muted">No model matches “{filter}”.</p> : session.catalog.setup ? null : <p class="muted">The catalog is empty.</p>;
          return (
            <ul class="models">
              {models.map((m) => {
                const s = byModel.get(m.id);
                return (
                  <li class="card model" id={`model-${m.id}`}>
                    <div class="model-head">
                      <h2>
                        <ModelId id={m.id} />
                      </h2>
                      <div>
                        <Badge kind="info">{m.endpoint}</Badge> <Badge>{m.owned_by}</Badge> {m.premium && <Badge kind="warn">premium: {m.required_plan}</Badge>}{' '}
                        {s && <Badge kind={statusBadge[s.status]}>{s.status}</Badge>}
                      </div>
                    </div>
                    {s?.problem && (
                      <p class="error-text problem">
                        Cannot be called: {s.problem}. Requests to it fail until the operator gives the provider its key.
                      </p>
                    )}
                    {m.description && <p class="muted clamp">{m.description}</p>}
                    <dl class="facts inline">
                      <Fact label="Context">{num(m.context_window)}</Fact>
                      <Fact label="Max output">{num(m.max_output_tokens)}</Fact>
                      <Fact label="Multiplier">×{m.token_multiplier}</Fact>
                      <Fact label="Billed by">{m.billing.unit === 'token' ? 'tokens' : `${m.billing.unit.replace('_', ' ')} (${num(m.billing.tokens_per_unit)} tokens)`}</Fact>
                    </dl>
                    <Capabilities m={m} />
                    {health.error ? <p class="muted">Health history unavailable: {health.error}</p> : <AvailabilityBars status={s} window={window} />}
                    {s && <Upstreams status={s} />}
                  </li>
                );
              })}
            </ul>
          );
        }}
      </Loaded>
    </Page>
  );
}
