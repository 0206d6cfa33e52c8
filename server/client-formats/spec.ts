// A client format: the API a family of clients speaks (OpenAI's, Anthropic's Messages, Google's
// Gemini), as the HTTP layer meets it before and around any capability — the error body its
// clients read, where they put their key, the header that marks them on a route several formats
// share, its own path prefix, a path of another format its clients read, and the catalog in its
// shape. The text capability's side of a format (decoding, encoding, its label) is its
// `ClientFormat` (capabilities/text/formats.ts). A new format is its folder here, its contract file,
// and one line in index.ts.
import type { IncomingHttpHeaders } from 'node:http';
import type { AppRoute, ServerInferResponses } from '@ts-rest/core';
import type { z } from 'zod';
import type { contract } from '../../contract/index.ts';
import type { CatalogEntry, ModelListQuery } from '../../contract/models.ts';
import type { RouteMeta } from '../../contract/routes/meta.ts';
import type { GatewayError } from '../runtime/errors.ts';

/** The contract's error envelopes that are a format's own (not a page's, not "the marked format's"). */
export type FormatEnvelope = Exclude<NonNullable<RouteMeta['errorEnvelope']>, 'page' | 'marked'>;

/** Whether the request carries a header (lower-case name). */
export type HasHeader = (name: string) => boolean;

/** `HasHeader` over a request's headers. */
export const hasHeaderIn =
  (headers: IncomingHttpHeaders): HasHeader =>
  (name) =>
    headers[name] !== undefined;

type Body200<R extends AppRoute> = Extract<ServerInferResponses<R>, { status: 200 }>['body'];

export type ClientFormatSpec = {
  /** Its name, as the request log and traces label it (a text `ClientFormat`'s `label`). */
  name: string;
  /** The contract's `errorEnvelope` of its routes (contract/routes/meta.ts), when it has its own. */
  envelope?: FormatEnvelope;
  /** The body of an error, as its clients read it. */
  errorBody(gw: GatewayError): object;
  /** The contract's `auth` scheme of its routes, where its clients put the key besides `Authorization: Bearer`, and how a 401 says to send it. */
  credential?: {
    scheme: RouteMeta['auth'];
    /** The headers that may carry it (lower-case): redacted from every log line. */
    headers: readonly string[];
    read(headers: IncomingHttpHeaders, query: unknown): string | undefined;
    missing: string;
  };
  /** A header its clients send with every request: a route shared between formats (the catalog) answers them in this format's shape. */
  marker?: string;
  /** Its API's own path prefix: every path under it is this format's, an unknown one included. */
  prefix?: string;
  /** A path of another format its clients read, rewritten to this format's own (before routing). */
  rewriteUrl?(method: string | undefined, url: string, has: HasHeader): string;
  /** The catalog in its shape, on the shared catalog routes (for the clients its `marker` marks). */
  catalog?: {
    list(entries: readonly CatalogEntry[], query: z.infer<typeof ModelListQuery>): Body200<typeof contract.metadata.listModels>;
    get(entry: (id: string) => CatalogEntry | undefined, suggest: (id: string) => string | undefined, id: string): Body200<typeof contract.metadata.retrieveModel>;
  };
};

/** A header's value when it was sent once and is not empty. */
export const headerValue = (v: string | string[] | undefined) => (typeof v === 'string' && v ? v : undefined);
