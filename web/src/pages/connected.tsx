import { api, call, type Session } from '../api.ts';
import { when } from '../format.ts';
import { Cell, ConfirmButton, EmptyState, Loaded, Page, Table, useLoad } from '../ui.tsx';

export function Connected(_: { session: Session }) {
  const state = useLoad(async () => (await call(api.GET('/v1/connected-apps'))).data);
  return (
    <Page title="Connected apps" intro="Apps you allowed to act for you. Revoking one ends its access at once, including the API key it received.">
      <Loaded state={state} what="connected apps">
        {(grants) =>
          grants.length === 0 ? (
            <EmptyState title="No app has access to your account">
              <p>When an app asks you to sign in with this gateway and you approve, it appears here, and you can revoke it at any time.</p>
            </EmptyState>
          ) : (
            <Table caption="Apps with access to your account" columns={['App', 'Access', 'Last used', '']}>
              {grants.map((g) => (
                <tr id={`grant-${g.id}`}>
                  <Cell label="App">
                    <strong>{g.app.name}</strong>
                    {g.app.description && (
                      <>
                        <br />
                        <small>{g.app.description}</small>
                      </>
                    )}
                  </Cell>
                  <Cell label="Access">
                    {g.scopes.join(', ')}
                    <br />
                    <small>granted {when(g.granted_at)}</small>
                    {g.api_key && (
                      <>
                        <br />
                        <small>
                          API key <code>{g.api_key.prefix}…</code>, last used {when(g.api_key.last_used_at)}
                        </small>
                      </>
                    )}
                  </Cell>
                  <Cell label="Last used">{when(g.last_used_at)}</Cell>
                  <Cell label="Actions" class="actions">
                    <ConfirmButton
                      label="Revoke"
                      ariaLabel={`Revoke ${g.app.name}`}
                      title={`Revoke “${g.app.name}”?`}
                      body={<p>The app loses access at once: its tokens and its API key stop working. It can ask you again later.</p>}
                      confirm="Revoke access"
                      onConfirm={async () => {
                        await call(api.DELETE('/v1/connected-apps/{id}', { params: { path: { id: g.id } } }));
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
    </Page>
  );
}
