// The shape of a non-text capability's vendor adapter: one exchange with the upstream (encode the
// request, call it through the vendor's client, decode the answer). Text formats are TextAdapters
// (types.ts): they also stream and pass requests through.
import type { ProviderConfig } from '../config/schema.ts';
import type * as C from '../translate/canonical.ts';

/** What one attempt on one upstream knows. */
export type AdapterCall = {
  provider: ProviderConfig;
  upstreamModel: string;
  /** Names what was stripped, ignored or changed for this upstream (the X-Gateway-Warnings channel). */
  warn(message: string): void;
  /** Wraps each wait on the upstream, so the gateway's own time (X-Gateway-Overhead-Ms) excludes it. */
  waitOn<T>(step: Promise<T>): Promise<T>;
  signal?: AbortSignal;
};

export interface Adapter<In, Out> {
  run(input: In, call: AdapterCall): Promise<Out>;
}

/** An answer and the usage the upstream reported (null: none, the gateway estimates). */
export type Metered<T> = { value: T; usage: C.Usage | null };

/** The warning for request fields the upstream has no place for. */
export const droppedFields = (fields: readonly string[]) => `not supported by this model's provider, dropped: ${fields.join(', ')}`;
