// A job that cannot read what it was submitted with (a transcription's audio in the blob store)
// fails with this, never as an internal error: the client learns to submit again, the operator
// what is wrong (instances that do not share one blob store: decision 0020).
import { GatewayError } from '../runtime/errors.ts';

export const jobInputMissing = (what: string) =>
  new GatewayError(
    500,
    'server_error',
    'job_input_missing',
    `The ${what} this job was submitted with is no longer in the gateway's blob store, so the job cannot run: submit it again (nothing was billed). ` +
      "If this repeats, the gateway's instances do not share one blob store (README, \"PostgreSQL and Redis\").",
  );
