import type { Session } from '../api.ts';

type Setup = NonNullable<Session['catalog']['setup']>;

/**
 * Why nothing can be called on a gateway with an empty catalog, and what its operator sets, with
 * the exact variable names (from GET /v1/session: the start-up log says the same).
 */
export function CatalogSetupNotice({ setup }: { setup: Setup }) {
  const { config_file: file } = setup;
  return (
    <section class="alert warn setup" aria-labelledby="setup-h" id="catalog-setup">
      <h2 id="setup-h">This gateway has no models yet</h2>
      {setup.problem === 'no_provider_key' ? (
        <p>No request can succeed until its operator enables a provider: set the API key of one or more of them in the environment, then restart the gateway.</p>
      ) : (
        <p>
          The config file the gateway started with defines no models. Its operator adds providers and models to it (<code>{file.example}</code> shows every field) and restarts the
          gateway, or removes the file and sets a provider’s API key in the environment.
        </p>
      )}
      <ul class="plain setup-keys" aria-label="Provider API key variables">
        {setup.provider_keys.map((k) => (
          <li>
            <code>{k.variable}</code> enables {k.provider}
          </li>
        ))}
      </ul>
      {setup.problem === 'no_provider_key' && (
        <p>
          Or describe providers, models and plans in a config file: <code>{file.default_path}</code> in the directory the gateway starts in, or the file named by{' '}
          <code>{file.variable}</code>; <code>{file.example}</code> shows every field.
        </p>
      )}
    </section>
  );
}
