// The dashboard talks to the gateway only through the generated client of the contract, with the
// session cookie and its CSRF token.
import { createGatewayClient, type GatewayClient, type Schemas } from '../../clients/typescript/src/index.ts';

export type { Schemas };
export type Session = Schemas['DashboardSession'];

let csrf: string | undefined;
export const api: GatewayClient = createGatewayClient({ baseUrl: location.origin, csrfToken: () => csrf });

/** Thrown for an error answer; `message` is the gateway's own, `param` the request field at fault (if one is). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | null,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

type Result<T> = { data?: T; error?: unknown; response: Response };

/** The data of a call, or an ApiError; a lost session sends the browser to sign in again. */
export async function call<T>(p: Promise<Result<T>>): Promise<T> {
  const { data, error, response } = await p;
  if (response.ok) return data as T;
  const body = (error ?? {}) as { error?: { message?: string; code?: string; param?: string | null } };
  if (response.status === 401) {
    location.assign(`/signin?next=${encodeURIComponent(location.pathname + location.search)}`);
  }
  throw new ApiError(response.status, body.error?.message ?? `The gateway answered ${response.status}.`, body.error?.code ?? null, body.error?.param ?? null);
}

/**
 * The model catalog in the gateway's own shape. `GET /v1/models` answers Anthropic's page only to a
 * request carrying `anthropic-version`, which the dashboard never sends.
 */
export async function loadCatalog(): Promise<Schemas['CatalogEntry'][]> {
  const list = await call(api.GET('/v1/models'));
  return 'object' in list ? list.data : [];
}

export async function loadSession(): Promise<Session> {
  const session = await call(api.GET('/v1/session'));
  csrf = session.csrf_token;
  return session;
}

export const csrfToken = () => csrf ?? '';
