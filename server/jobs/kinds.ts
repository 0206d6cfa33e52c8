// What a kind of async job is: how to run it and what its object is called. The capabilities
// make theirs (images/video, speech, transcription) and the composition root (main.ts) adds them
// to the instance's JobKinds; the runner knows none of them.
import type { Readable } from 'node:stream';
import type { JobCapability } from '../config/capabilities.ts';
import type { Outcome } from '../billing/metered.ts';

/** The stored job a run sees. */
export type JobRecord = { id: string; kind: string; model: string; request: unknown; state: unknown; attempts: number };

export type JobRun = {
  job: JobRecord;
  /** Aborted when the gateway stops or this instance lost the job's lease (another one runs it). */
  signal: AbortSignal;
};

/** A finished run: the result JSON and/or an output to download, what was billed, what changed. */
export type JobDone = {
  type: 'done';
  result?: unknown;
  output?: { body: Readable; contentType: string };
  /** An output the kind stored itself (a hosted copy it links to in `result`): deleted with the job. */
  outputKey?: string;
  billing: Outcome;
  warnings?: string[];
  /** Speech: pronunciation rules skipped and why (shown apart, as the spec asks). */
  pronunciationWarnings?: string[];
};
/** A long upstream operation still running: run again in `inMs` with `state` (no worker waits meanwhile). */
export type JobRecheck = { type: 'recheck'; inMs: number; state: unknown };

/** A stored job whose kind this instance does not run is shown and settled as an images job (the first kind there was). */
export const UNKNOWN_KIND: JobCapability = 'images';

export type JobKind = {
  kind: string;
  /** What the job makes: its object name and the ledger's endpoint come from the capability table. */
  capability: JobCapability;
  /** Where the output is downloaded (speech, transcription), or none (images answer in `result`). */
  downloadPath?: (id: string) => string;
  /** Throws a GatewayError (the job fails with its body) or anything else (internal error). */
  run(r: JobRun): Promise<JobDone | JobRecheck>;
  /**
   * Blob keys the job's stored request holds (an upload): deleted by the runner once the job's end
   * (done or failed) is recorded, never before — a run whose end could not be recorded runs again
   * and needs them.
   */
  inputs?(request: unknown): string[];
};

/** The job kinds this instance runs: one list, filled at start-up, read by the service and the runner. */
export class JobKinds {
  private readonly kinds = new Map<string, JobKind>();

  add(...kinds: JobKind[]): this {
    for (const kind of kinds) this.kinds.set(kind.kind, kind);
    return this;
  }

  get(name: string): JobKind | undefined {
    return this.kinds.get(name);
  }
}
