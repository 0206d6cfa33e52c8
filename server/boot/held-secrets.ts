// Which values of the configuration and the environment are secrets, registered with the
// process's redactor (runtime/held-secrets.ts) as soon as they are loaded.
import type { ResolvedConfig } from '../config/schema.ts';
import { heldSecrets } from '../runtime/held-secrets.ts';

/** Header names whose value is a credential (a provider's custom auth header, an OTLP collector's token). */
const CREDENTIAL_HEADER = /authorization|api[-_]?key|token|secret|cookie|signature|password/i;

/** A credential header's value, and its token alone (`Bearer <token>`: the token is what an upstream could echo). */
const headerSecret = (value: string) => [value, value.replace(/^(bearer|basic)\s+/i, '')];

/** The password of a `scheme://user:password@host` URL, if it has one. */
function urlPassword(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const p = new URL(url).password;
    return p ? decodeURIComponent(p) : undefined;
  } catch {
    return undefined;
  }
}

/** `k=v,k2=v2` (OTEL_EXPORTER_OTLP_HEADERS): the values of credential-like names. */
function headerListSecrets(list: string | undefined): string[] {
  if (!list) return [];
  return list.split(',').flatMap((pair) => {
    const eq = pair.indexOf('=');
    if (eq < 0) return [];
    return CREDENTIAL_HEADER.test(pair.slice(0, eq)) ? headerSecret(decodeURIComponent(pair.slice(eq + 1).trim())) : [];
  });
}

/** Every secret of the loaded configuration: provider keys (pools included), credential headers, client secrets, SMTP, web search, budget alerts. */
export function configSecrets(config: ResolvedConfig): string[] {
  const out: (string | undefined)[] = [];
  for (const p of config.providers) {
    out.push(p.api_key);
    for (const k of p.api_keys ?? []) out.push(typeof k === 'string' ? k : k?.key);
    for (const [name, value] of Object.entries(p.headers ?? {})) if (CREDENTIAL_HEADER.test(name)) out.push(...headerSecret(value));
  }
  for (const idp of config.auth.providers) out.push(idp.client_secret);
  out.push(config.smtp?.password, config.budgetAlerts.secret);
  if (config.webSearch?.backend === 'brave') out.push(config.webSearch.api_key);
  return out.filter((v): v is string => typeof v === 'string');
}

/** The environment's secrets that the configuration does not carry: store passwords, the S3 key, OTLP headers, the gateway's own. */
export function environmentSecrets(env: NodeJS.ProcessEnv): string[] {
  const out = [
    urlPassword(env.DATABASE_URL),
    urlPassword(env.REDIS_URL),
    env.S3_SECRET_ACCESS_KEY,
    env.GATEWAY_SECRET,
    env.GATEWAY_ADMIN_TOKEN,
    ...headerListSecrets(env.OTEL_EXPORTER_OTLP_HEADERS),
    ...headerListSecrets(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS),
  ];
  return out.filter((v): v is string => typeof v === 'string');
}

/** Registers the configuration's and the environment's secrets; the caller adds what it resolves later (the secret made at first start, the admin token). */
export function holdSecrets(config: ResolvedConfig, env: NodeJS.ProcessEnv): void {
  heldSecrets.add(...configSecrets(config), ...environmentSecrets(env));
}
