import { useEffect, useState } from 'preact/hooks';
import { api, call, type Schemas, type Session } from '../api.ts';
import { duration, num, usd, utcDay, when } from '../format.ts';
import { Badge, Cell, EmptyState, Loaded, Meter, ModelId, Page, Table, useLoad } from '../ui.tsx';
import { CurlExample } from './keys.tsx';
import { CatalogSetupNotice } from './setup.tsx';

/** Counts down to `iso`, once a second. */
function Countdown({ iso }: { iso: string }) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  return (
    <span>
      <span class="countdown">{duration(Date.parse(iso) - now)}</span> (at {when(iso)})
    </span>
  );
}

/**
 * The user's own counters over all keys and connected apps (`limits.user`): what the plan allows
 * the person, whatever the number of keys. A request must fit these and its key's.
 */
function AccountLimits({ user }: { user: Schemas['UserLimits'] }) {
  return (
    <section class="card" aria-labelledby="account-h" id="account-limits">
      <h2 id="account-h">You, over all keys and apps</h2>
      {user.daily_tokens && (
        <Meter
          label="Your tokens today"
          used={user.daily_tokens.used}
          limit={user.daily_tokens.limit}
          detail={
            <>
              Revoked keys’ use today counts too. Resets in <Countdown iso={user.daily_tokens.reset_at} />
            </>
          }
        />
      )}
      {user.requests_per_minute && (
        <Meter
          label="Your requests this minute"
          used={user.requests_per_minute.used}
          limit={user.requests_per_minute.limit}
          detail={user.requests_per_minute.used ? <>Window ends {when(user.requests_per_minute.reset_at)}</> : 'No requests in the current window.'}
        />
      )}
      {user.concurrent_jobs && <Meter label="Your active jobs" used={user.concurrent_jobs.active} limit={user.concurrent_jobs.limit} />}
      <Meter label="API keys" used={user.keys.active} limit={user.keys.limit} detail={user.keys.remaining ? `${num(user.keys.remaining)} more can be created.` : 'Revoke a key to create another.'} />
      {!user.daily_tokens && !user.requests_per_minute && !user.concurrent_jobs && <p class="muted">Your plan limits each key on its own, not your keys together.</p>}
    </section>
  );
}

export function Overview({ session }: { session: Session }) {
  const today = utcDay(Date.now());
  const state = useLoad(async () => {
    const [usage, keys] = await Promise.all([call(api.GET('/v1/usage', { params: { query: { start: today, end: today } } })), call(api.GET('/v1/keys'))]);
    return { usage, keys: keys.data };
  });
  // Live counters: refreshed every 15 s while the page is open.
  useEffect(() => {
    const t = setInterval(state.reload, 15_000);
    return () => clearInterval(t);
  }, [state.reload]);
  return (
    <Page title="Overview" intro={`Signed in as ${session.user.email ?? session.user.name ?? session.user.id}.`}>
      <Loaded state={state} what="your plan and limits">
        {({ usage, keys }) => {
          const active = keys.filter((k) => !k.revoked_at);
          const { plan, limits } = usage;
          const setup = session.catalog.setup;
          return (
            <>
              {setup && <CatalogSetupNotice setup={setup} />}
              {active.length === 0 && (
                <EmptyState title="Create your first API key">
                  <p>Every request to the API needs a key.{setup ? ' Once the gateway has models, create one and call them with it.' : ' Create one, then call any model with it:'}</p>
                  {!setup && <CurlExample keyText="$MODEL_GATEWAY_KEY" />}
                  <p>
                    <a class="button" href="/keys">
                      Create an API key
                    </a>
                  </p>
                </EmptyState>
              )}
              <div class="cards">
                <section class="card" aria-labelledby="plan-h">
                  <h2 id="plan-h">
                    Plan <Badge kind="info">{plan.id}</Badge>
                  </h2>
                  <dl class="facts">
                    <dt>Daily tokens per key</dt>
                    <dd>{num(plan.daily_tokens)}</dd>
                    <dt>Requests per minute per key</dt>
                    <dd>{num(plan.requests_per_minute)}</dd>
                    <dt>Concurrent jobs per key</dt>
                    <dd>{num(plan.max_concurrent_jobs)}</dd>
                    {plan.user_daily_tokens !== null && (
                      <>
                        <dt>Daily tokens, all keys and apps</dt>
                        <dd>{num(plan.user_daily_tokens)}</dd>
                      </>
                    )}
                    {plan.user_requests_per_minute !== null && (
                      <>
                        <dt>Requests per minute, all keys and apps</dt>
                        <dd>{num(plan.user_requests_per_minute)}</dd>
                      </>
                    )}
                    {plan.user_max_concurrent_jobs !== null && (
                      <>
                        <dt>Concurrent jobs, all keys and apps</dt>
                        <dd>{num(plan.user_max_concurrent_jobs)}</dd>
                      </>
                    )}
                    {(
                      [
                        ['Daily budget per key', plan.daily_budget_usd],
                        ['Monthly budget per key', plan.monthly_budget_usd],
                        ['Daily budget, all keys and apps', plan.user_daily_budget_usd],
                        ['Monthly budget, all keys and apps', plan.user_monthly_budget_usd],
                      ] as const
                    ).map(([label, budget]) =>
                      budget === null ? null : (
                        <>
                          <dt>{label}</dt>
                          <dd>{usd(budget)}</dd>
                        </>
                      ),
                    )}
                    <dt>API keys at once</dt>
                    <dd>{num(plan.max_keys)}</dd>
                  </dl>
                  <h3>Premium models</h3>
                  {plan.premium_models.length === 0 ? (
                    <p class="muted">This gateway has no premium models.</p>
                  ) : (
                    <ul class="plain" id="premium">
                      {plan.premium_models.map((m) => (
                        <li>
                          <ModelId id={m.model} /> {m.allowed ? <Badge kind="ok">included</Badge> : <Badge kind="warn">needs {m.required_plan}</Badge>}
                        </li>
                      ))}
                    </ul>
                  )}
                </section>
                <section class="card" aria-labelledby="today-h">
                  <h2 id="today-h">Today {active.length > 1 ? `(${active.length} keys together)` : ''}</h2>
                  {active.length === 0 ? (
                    <p class="muted">
                      Limits apply per key: with a key you get {num(plan.daily_tokens)} tokens a day (reset at 00:00 UTC) and {num(plan.requests_per_minute)} requests a minute.
                    </p>
                  ) : (
                  <>
                  <Meter
                    label="Billed tokens today"
                    used={limits.daily_tokens.used}
                    limit={limits.daily_tokens.limit}
                    detail={
                      <>
                        Resets in <Countdown iso={limits.daily_tokens.reset_at} />
                      </>
                    }
                  />
                  <Meter
                    label="Requests this minute"
                    used={limits.requests_per_minute.used}
                    limit={limits.requests_per_minute.limit}
                    detail={limits.requests_per_minute.used ? <>Window ends {when(limits.requests_per_minute.reset_at)}</> : 'No requests in the current window.'}
                  />
                  <Meter label="Active jobs" used={limits.concurrent_jobs.active} limit={limits.concurrent_jobs.limit} />
                  </>
                  )}
                  <p class="muted">
                    {num(usage.totals.requests)} requests today, {num(usage.totals.errors)} with errors
                    {usage.totals.requests > 0 && usage.totals.cost !== null && <>; cost {usd(usage.totals.cost)}</>}. <a href="/usage">See usage</a>.
                  </p>
                </section>
                <AccountLimits user={limits.user} />
              </div>
              {active.length > 1 && (
                <section aria-labelledby="per-key-h">
                  <h2 id="per-key-h">Per key</h2>
                  <p class="muted">Each key has the plan’s limits of its own.</p>
                  <Table caption="Today per key" columns={['Key', 'Billed tokens today', 'Requests this minute', 'Active jobs']}>
                    {active.map((k) => (
                      <tr>
                        <Cell label="Key">
                          {k.name ?? 'unnamed'} <code>{k.prefix}…</code>
                        </Cell>
                        <Cell label="Billed tokens today">
                          {num(k.limits!.daily_tokens.used)} / {num(k.limits!.daily_tokens.limit)}
                        </Cell>
                        <Cell label="Requests this minute">
                          {num(k.limits!.requests_per_minute.used)} / {num(k.limits!.requests_per_minute.limit)}
                        </Cell>
                        <Cell label="Active jobs">
                          {num(k.limits!.concurrent_jobs.active)} / {num(k.limits!.concurrent_jobs.limit)}
                        </Cell>
                      </tr>
                    ))}
                  </Table>
                </section>
              )}
            </>
          );
        }}
      </Loaded>
    </Page>
  );
}
