import { useEffect, useState } from 'preact/hooks';
import { api, call, loadCatalog, type Schemas, type Session } from '../api.ts';
import { BudgetEditor, BudgetLines } from '../budgets.tsx';
import { num, usd, utcDay, when } from '../format.ts';
import { Alert, Badge, Cell, ConfirmButton, EmptyState, Field, Loaded, Loading, Page, Secret, Snippet, Table, useAction, useLoad } from '../ui.tsx';

/** The endpoints whose models answer /v1/chat/completions (every text model does). */
const TEXT_ENDPOINTS: Schemas['ModelEndpoint'][] = ['chat', 'messages', 'responses', 'generate_content'];

type Usable = { id: string; endpoint: string }[];
let usableModels: Promise<Usable> | null = null;
/**
 * The catalog's models this user's plan may call and that can work (not `misconfigured`), in
 * catalog order, for examples: an example naming any other model would answer model_not_found or
 * 403. Loaded once per page load.
 */
function loadUsableModels(): Promise<Usable> {
  const today = utcDay(Date.now());
  usableModels ??= Promise.all([
    loadCatalog(),
    call(api.GET('/v1/usage', { params: { query: { start: today, end: today } } })).catch(() => null),
    call(api.GET('/v1/models/status', { params: { query: { window: '1h' } } })).catch(() => null),
  ]).then(
    ([models, usage, status]) => {
      const allowed = new Set((usage?.plan.premium_models ?? []).filter((m) => m.allowed).map((m) => m.model));
      const broken = new Set((status?.data ?? []).filter((s) => s.status === 'misconfigured').map((s) => s.model));
      return models.filter((m) => (!m.premium || allowed.has(m.id)) && !broken.has(m.id));
    },
    () => [],
  );
  return usableModels;
}

/** The first usable model of the first of `endpoints` that has one; null when none has (undefined while loading). */
export function useExampleModel(endpoints: Schemas['ModelEndpoint'][]): string | null | undefined {
  const [model, setModel] = useState<string | null | undefined>(undefined);
  useEffect(() => {
    void loadUsableModels().then((usable) => {
      for (const e of endpoints) {
        const m = usable.find((u) => u.endpoint === e);
        if (m) return setModel(m.id);
      }
      setModel(null);
    });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [endpoints.join()]);
  return model;
}

/** A first request with a key, for the page that shows it and for empty states. */
export function CurlExample({ keyText }: { keyText: string }) {
  const model = useExampleModel(TEXT_ENDPOINTS);
  if (model === undefined) return <Loading what="an example request" />;
  if (model === null) {
    return <p class="muted" id="no-example">This gateway has no text model your plan can use yet, so there is no request to try.</p>;
  }
  const text = `curl ${location.origin}/v1/chat/completions \\
  -H "Authorization: Bearer ${keyText}" \\
  -H "Content-Type: application/json" \\
  -d '{"model": "${model}", "messages": [{"role": "user", "content": "Hello"}]}'`;
  return <Snippet text={text} label="Example request" />;
}

type PlanBudgets = Pick<Schemas['UsageReport']['plan'], 'id' | 'daily_budget_usd' | 'monthly_budget_usd'>;

/** The plan's per-key budgets, and that a key's own cap holds beside them (the lower binds). */
function PlanKeyBudgets({ plan }: { plan: PlanBudgets }) {
  const { daily_budget_usd: daily, monthly_budget_usd: monthly } = plan;
  const parts = [daily !== null && `${usd(daily)} a day`, monthly !== null && `${usd(monthly)} a month`].filter(Boolean);
  return (
    <p class="muted" id="plan-key-budgets">
      {parts.length ? (
        <>
          Your plan (<strong>{plan.id}</strong>) lets each key spend {parts.join(' and ')}. A key’s own spend cap holds beside the plan’s budget and the lower one binds: a cap can
          tighten the plan’s budget, not raise it.
        </>
      ) : (
        <>Your plan (<strong>{plan.id}</strong>) sets no spend budget per key: a key’s own spend cap is the only limit on what it spends.</>
      )}{' '}
      Spend is in US dollars at the models’ prices; days and months are UTC.
    </p>
  );
}

/** The button (and dialog) that sets or removes an active key's spend caps, with the plan's per-key budgets as hints. */
function KeyCaps({ k, plan, onSaved }: { k: Schemas['ApiKey']; plan: PlanBudgets | undefined; onSaved: () => void }) {
  const name = k.name ?? k.prefix;
  const planHint = (v: string | null | undefined, per: string) => (v === undefined ? '' : v === null ? ` Your plan sets no budget ${per}.` : ` Your plan’s: ${usd(v)} ${per}; the lower binds.`);
  return (
    <BudgetEditor
      id={`caps-${k.id}`}
      label="Edit caps"
      ariaLabel={`Edit caps of key ${name}`}
      title={`Spend caps of “${name}”`}
      intro={<p>Once this key’s spend would pass a cap, its requests are refused (429, <code>budget_exceeded</code>) until the day or month ends (UTC).</p>}
      own={k}
      fieldLabel={(period) => `${period} cap (US dollars)`}
      hints={{
        daily_budget_usd: `Empty: no daily cap of its own.${planHint(plan?.daily_budget_usd, 'a day per key')}`,
        monthly_budget_usd: `Empty: no monthly cap of its own.${planHint(plan?.monthly_budget_usd, 'a month per key')}`,
      }}
      save={async (change) => {
        await call(api.PATCH('/v1/keys/{id}', { params: { path: { id: k.id } }, body: change }));
      }}
      onSaved={onSaved}
    />
  );
}

export function Keys(_: { session: Session }) {
  const state = useLoad(async () => (await call(api.GET('/v1/keys'))).data);
  // The plan's per-key budgets (a key's own cap holds beside them); the list shows without them.
  const today = utcDay(Date.now());
  const plan = useLoad(async () => (await call(api.GET('/v1/usage', { params: { query: { start: today, end: today } } }))).plan);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<Schemas['CreatedApiKey'] | null>(null);
  const { busy, error, run } = useAction(async () => {
    setCreated(await call(api.POST('/v1/keys', { body: { name } })));
    setName('');
    state.reload();
  });
  const create = (e: Event) => {
    e.preventDefault();
    void run();
  };
  return (
    <Page title="API keys" intro="Keys authenticate your requests to the API. Each key has your plan’s limits, and may have spend caps of its own; revoke a key you no longer use.">
      {created && (
        <Alert kind="success">
          <p>
            <strong>Key “{created.name}” created.</strong> Copy it now: it is shown only once.
          </p>
          <Secret text={created.key} id="new-key" />
          <p>Try it:</p>
          <CurlExample keyText={created.key} />
        </Alert>
      )}
      <section aria-labelledby="create-h" class="card">
        <h2 id="create-h">Create a key</h2>
        <form onSubmit={create} class="inline-form">
          <Field id="key-name" label="Name" hint="Where you will use it, e.g. “laptop” or “CI”.">
            <input id="key-name" name="name" required maxLength={100} value={name} aria-describedby="key-name-hint" onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          </Field>
          <button type="submit" id="create-key" disabled={busy}>
            {busy ? 'Creating…' : 'Create key'}
          </button>
        </form>
        {error && <Alert>{error}</Alert>}
      </section>
      <Loaded state={state} what="your keys">
        {(keys) =>
          keys.length === 0 ? (
            <EmptyState title="No keys yet">
              <p>Create your first key above; you will see it once, with a request to try it.</p>
            </EmptyState>
          ) : (
            <>
              {plan.data && <PlanKeyBudgets plan={plan.data} />}
              <Table caption="Your API keys" columns={['Name', 'Key', 'Created', 'Last used', 'Today', 'Spend caps', '']}>
                {keys.map((k) => (
                  <tr id={`key-${k.id}`}>
                    <Cell label="Name">{k.name ?? 'unnamed'}</Cell>
                    <Cell label="Key">
                      <code class="nowrap">{k.prefix}…</code>
                    </Cell>
                    <Cell label="Created">{when(k.created_at)}</Cell>
                    <Cell label="Last used">{when(k.last_used_at)}</Cell>
                    <Cell label="Today">{k.limits ? `${num(k.limits.daily_tokens.used)} tokens` : <Badge kind="bad">revoked {when(k.revoked_at)}</Badge>}</Cell>
                    <Cell label="Spend caps">
                      {k.revoked_at ? (
                        <span class="muted">—</span>
                      ) : (
                        <div class="budget-cell">
                          <BudgetLines id={`key-caps-${k.id}`} own={k} unset={() => 'none'} />
                          <KeyCaps k={k} plan={plan.data} onSaved={state.reload} />
                        </div>
                      )}
                    </Cell>
                    <Cell label="Actions" class="actions">
                      {!k.revoked_at && (
                        <ConfirmButton
                          label="Revoke"
                          ariaLabel={`Revoke key ${k.name ?? k.prefix}`}
                          title={`Revoke “${k.name ?? k.prefix}”?`}
                          body={<p>Requests with this key will be refused within a few seconds. This cannot be undone.</p>}
                          confirm="Revoke key"
                          onConfirm={async () => {
                            await call(api.POST('/v1/keys/{id}/revoke', { params: { path: { id: k.id } } }));
                            state.reload();
                          }}
                        />
                      )}
                    </Cell>
                  </tr>
                ))}
              </Table>
            </>
          )
        }
      </Loaded>
    </Page>
  );
}
