import { useState } from 'preact/hooks';
import { api, call, type Schemas, type Session } from '../api.ts';
import { when } from '../format.ts';
import { Alert, Badge, Cell, ConfirmButton, EmptyState, Field, Loaded, Page, Secret, Table, useAction, useLoad } from '../ui.tsx';

type Form = { name: string; description: string; redirect_uris: string; homepage_url: string; logo_url: string; public_client: boolean };
const blank: Form = { name: '', description: '', redirect_uris: '', homepage_url: '', logo_url: '', public_client: false };

export function Apps(_: { session: Session }) {
  const state = useLoad(async () => (await call(api.GET('/v1/apps'))).data);
  const [form, setForm] = useState<Form>(blank);
  const [shown, setShown] = useState<Schemas['OAuthAppWithSecret'] | null>(null);
  const set = (k: keyof Form) => (e: Event) => {
    const t = e.target as HTMLInputElement;
    setForm({ ...form, [k]: t.type === 'checkbox' ? t.checked : t.value });
  };
  const { busy, error, run } = useAction(async () => {
    const created = await call(
      api.POST('/v1/apps', {
        body: {
          name: form.name.trim(),
          description: form.description.trim() || undefined,
          redirect_uris: form.redirect_uris.split(/\s+/).filter(Boolean),
          homepage_url: form.homepage_url || null,
          logo_url: form.logo_url || null,
          public_client: form.public_client,
        },
      }),
    );
    setShown(created);
    setForm(blank);
    state.reload();
  });
  const register = (e: Event) => {
    e.preventDefault();
    void run();
  };
  return (
    <Page title="OAuth apps" intro="Register an app to let people sign in with this gateway and use models on their own quota (docs/oauth.md).">
      {shown && (
        <Alert kind="success">
          <p>
            <strong>{shown.name}</strong> — client id: <code id="client-id">{shown.client_id}</code>
          </p>
          {shown.client_secret ? (
            <>
              <p>Client secret (shown once: copy it now):</p>
              <Secret text={shown.client_secret} id="client-secret" />
            </>
          ) : (
            <p>A public client has no secret: it signs in with PKCE.</p>
          )}
        </Alert>
      )}
      <Loaded state={state} what="your apps">
        {(apps) =>
          apps.length === 0 ? (
            <EmptyState title="No apps yet">
              <p>
                Register your first app below: give it a name and the redirect URI your app listens on (for a local test, <code>http://localhost:3000/callback</code>). You get a client id and
                secret for the authorization-code flow.
              </p>
            </EmptyState>
          ) : (
            <Table caption="Your OAuth apps" columns={['App', 'Client id', 'Created', '']}>
              {apps.map((a) => (
                <tr>
                  <Cell label="App">
                    <strong>{a.name}</strong>
                    <br />
                    <small class="break">{a.redirect_uris.join(', ')}</small>
                  </Cell>
                  <Cell label="Client id">
                    <code class="break">{a.client_id}</code> {a.public_client ? <Badge>public (PKCE)</Badge> : <Badge>confidential</Badge>}
                  </Cell>
                  <Cell label="Created">{when(a.created_at)}</Cell>
                  <Cell label="Actions" class="actions">
                    {!a.public_client && (
                      <ConfirmButton
                        label="Rotate secret"
                        ariaLabel={`Rotate secret of ${a.name}`}
                        danger={false}
                        title={`Rotate the secret of “${a.name}”?`}
                        body={<p>The current secret stops working at once; your app needs the new one, shown after this.</p>}
                        confirm="Rotate secret"
                        onConfirm={async () => setShown(await call(api.POST('/v1/apps/{id}/rotate-secret', { params: { path: { id: a.id } } })))}
                      />
                    )}
                    <ConfirmButton
                      label="Delete"
                      ariaLabel={`Delete ${a.name}`}
                      title={`Delete “${a.name}”?`}
                      body={<p>Every user’s access through this app ends at once: their tokens and the app’s API keys stop working. This cannot be undone.</p>}
                      confirm="Delete app"
                      onConfirm={async () => {
                        await call(api.DELETE('/v1/apps/{id}', { params: { path: { id: a.id } } }));
                        setShown(null);
                        state.reload();
                      }}
                    />
                  </Cell>
                </tr>
              ))}
            </Table>
          )
        }
      </Loaded>
      <section class="card" aria-labelledby="register-h">
        <h2 id="register-h">Register an app</h2>
        <form onSubmit={register}>
          <Field id="app-name" label="Name">
            <input id="app-name" required maxLength={100} value={form.name} onInput={set('name')} />
          </Field>
          <Field id="app-description" label="Description" hint="Shown to users on the consent page.">
            <textarea id="app-description" maxLength={1000} value={form.description} onInput={set('description')} aria-describedby="app-description-hint" />
          </Field>
          <Field id="app-redirects" label="Redirect URIs" hint="One per line; matched exactly. HTTPS, or http://localhost for development.">
            <textarea id="app-redirects" required value={form.redirect_uris} onInput={set('redirect_uris')} aria-describedby="app-redirects-hint" />
          </Field>
          <Field id="app-homepage" label="Homepage URL">
            <input id="app-homepage" type="url" value={form.homepage_url} onInput={set('homepage_url')} />
          </Field>
          <Field id="app-logo" label="Logo URL">
            <input id="app-logo" type="url" value={form.logo_url} onInput={set('logo_url')} />
          </Field>
          <div class="check">
            <input id="app-public" type="checkbox" checked={form.public_client} onChange={set('public_client')} />
            <label for="app-public">Public client (no secret; PKCE only — for single-page and native apps)</label>
          </div>
          {error && <Alert>{error}</Alert>}
          <button type="submit" id="create-app" disabled={busy}>
            {busy ? 'Registering…' : 'Register app'}
          </button>
        </form>
      </section>
    </Page>
  );
}
