import { useEffect, useState } from 'preact/hooks';
import { api, call, type Schemas, type Session } from '../api.ts';
import { num, when } from '../format.ts';
import { Alert, Badge, Cell, ConfirmButton, EmptyState, Field, Loaded, Page, Secret, Table, useAction, useLoad } from '../ui.tsx';

let textModel: Promise<string> | null = null;
/** A chat model of this gateway's catalog for examples (loaded once). */
function firstTextModel(): Promise<string> {
  textModel ??= call(api.GET('/v1/models')).then(
    (list) => list.data.find((m) => m.endpoint === 'chat' && !m.premium)?.id ?? list.data.find((m) => m.endpoint === 'chat')?.id ?? 'gpt-4o-mini',
    () => 'gpt-4o-mini',
  );
  return textModel;
}

/** A first request with a key, for the page that shows it and for empty states. */
export function CurlExample({ keyText }: { keyText: string }) {
  const [model, setModel] = useState('…');
  useEffect(() => void firstTextModel().then(setModel), []);
  const text = `curl ${location.origin}/v1/chat/completions \\
  -H "Authorization: Bearer ${keyText}" \\
  -H "Content-Type: application/json" \\
  -d '{"model": "${model}", "messages": [{"role": "user", "content": "Hello"}]}'`;
  return (
    <div class="snippet">
      <pre>
        <code data-copy={text}>{text}</code>
      </pre>
    </div>
  );
}

export function Keys(_: { session: Session }) {
  const state = useLoad(async () => (await call(api.GET('/v1/keys'))).data);
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
    <Page title="API keys" intro="Keys authenticate your requests to the API. Each key has your plan’s limits; revoke a key you no longer use.">
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
            <Table caption="Your API keys" columns={['Name', 'Key', 'Created', 'Last used', 'Today', '']}>
              {keys.map((k) => (
                <tr id={`key-${k.id}`}>
                  <Cell label="Name">{k.name ?? 'unnamed'}</Cell>
                  <Cell label="Key">
                    <code>{k.prefix}…</code>
                  </Cell>
                  <Cell label="Created">{when(k.created_at)}</Cell>
                  <Cell label="Last used">{when(k.last_used_at)}</Cell>
                  <Cell label="Today">{k.limits ? `${num(k.limits.daily_tokens.used)} tokens` : <Badge kind="bad">revoked {when(k.revoked_at)}</Badge>}</Cell>
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
          )
        }
      </Loaded>
    </Page>
  );
}
