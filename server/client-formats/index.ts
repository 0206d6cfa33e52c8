// Every client format the gateway speaks, one line each (spec.ts says what a format carries), and
// how the HTTP layer finds the one a request or a route speaks.
import type { RouteMeta } from '../../contract/routes/meta.ts';
import { anthropicClientFormat } from './anthropic/index.ts';
import { geminiClientFormat } from './gemini/index.ts';
import { openaiClientFormat } from './openai/index.ts';
import type { ClientFormatSpec, FormatEnvelope, HasHeader } from './spec.ts';

export const CLIENT_FORMATS: readonly ClientFormatSpec[] = [openaiClientFormat, anthropicClientFormat, geminiClientFormat];

/** The gateway's own shape: the format of routes that name no other. */
export const DEFAULT_CLIENT_FORMAT = openaiClientFormat;

const byEnvelope = new Map(CLIENT_FORMATS.flatMap((f) => (f.envelope ? [[f.envelope, f] as const] : [])));
const byScheme = new Map(CLIENT_FORMATS.flatMap((f) => (f.credential ? [[f.credential.scheme, f] as const] : [])));
const marked = CLIENT_FORMATS.filter((f) => f.marker !== undefined);
const prefixed = CLIENT_FORMATS.filter((f) => f.prefix !== undefined);
const rewriting = CLIENT_FORMATS.filter((f) => f.rewriteUrl !== undefined);

/** Every header a client format's clients may send their key in (besides `Authorization`). */
export const CREDENTIAL_HEADERS: readonly string[] = CLIENT_FORMATS.flatMap((f) => f.credential?.headers ?? []);

/** The format whose error body a route's `errorEnvelope` names. */
export const formatOfEnvelope = (envelope: FormatEnvelope): ClientFormatSpec | undefined => byEnvelope.get(envelope);

/** The format whose credential a route's `auth` scheme reads. */
export const formatOfScheme = (scheme: RouteMeta['auth']): ClientFormatSpec | undefined => byScheme.get(scheme);

/** The format whose marker header the request carries, for a route several formats share. */
export const formatMarkedBy = (has: HasHeader): ClientFormatSpec | undefined => marked.find((f) => has(f.marker!));

/** The format that owns every path under its prefix. */
export const formatOfPath = (path: string): ClientFormatSpec | undefined => prefixed.find((f) => path === f.prefix || path.startsWith(`${f.prefix}/`));

/** A URL as the formats rewrite it before routing (a path of another format their clients read). */
export const rewrittenUrl = (method: string | undefined, url: string, has: HasHeader): string => rewriting.reduce((u, f) => f.rewriteUrl!(method, u, has), url);
