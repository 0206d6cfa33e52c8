import { z } from 'zod';
import { ErrorObject } from './errors.ts';

export const JobStatus = z
  .enum(['queued', 'in_progress', 'done', 'failed', 'cancelled', 'expired'])
  .meta({
    id: 'JobStatus',
    description:
      'queued → in_progress → done | failed. `in_progress` also while the job waits between checks of a long upstream operation; ' +
      'a job whose instance stopped returns to `in_progress` on another once its lease runs out, and is `failed` (code job_interrupted) after three such claims. ' +
      '`cancelled` is reserved for jobs withdrawn by the gateway; `expired` once outputs were deleted (after `expires_at` polling answers 404 job_not_found). Downloads need `done`.',
  });

/** Why a job failed: the common error object, with the id its failure was logged under. */
export const JobError = ErrorObject.extend({
  request_id: z
    .string()
    .describe("The id the gateway's logs and the usage record carry for this job's work (the job's id): quote it when reporting a failure."),
}).meta({
  id: 'JobError',
  description:
    'Codes of a failed job besides the upstream\'s (upstream_error, all_upstreams_failed, content_policy_violation, …): job_interrupted (its instance stopped three times), ' +
    "upstream_timeout (not done within jobs.max_run_minutes), job_input_missing (what it was submitted with, e.g. a transcription's audio, is no longer in the gateway's blob store: submit it again), internal_error.",
});

const JobId = z.string().regex(/^job_[A-Za-z0-9]+$/, { message: 'not a job id' });
export const JobIdParams = z.object({ id: JobId });

/**
 * The job object shared by image/video, speech and transcription jobs. Shape follows the
 * familiar batch/video-job objects: an id, an `object` naming the kind, a status and timestamps.
 */
export const Job = z
  .object({
    id: z.string().describe('`job_` + random; bound to the API key that created it.'),
    object: z.enum(['image.generation.job', 'video.generation.job', 'audio.speech.job', 'audio.transcription.job']),
    status: JobStatus,
    model: z.string(),
    created_at: z.number().int().describe('Unix seconds'),
    started_at: z.number().int().nullable(),
    completed_at: z.number().int().nullable(),
    expires_at: z.number().int().describe('Unix seconds after which the job and its outputs are deleted.'),
    error: JobError.nullable().describe('Set when status is failed.'),
    warnings: z
      .array(z.string())
      .describe('What the gateway changed or left out for the upstream that ran the job (the X-Gateway-Warnings of a synchronous request). Empty when nothing was.'),
    pronunciation_warnings: z
      .array(z.string())
      .describe('Speech jobs: why pronunciation rules were skipped (e.g. phoneme rules on a model without phoneme support). Empty otherwise.'),
    result: z
      .unknown()
      .nullable()
      .describe('Image and video jobs, once done: the images response (`{created, data[]}`, as a synchronous request answers; a video entry has the hosted MP4 `url`, `content_type` and `duration_seconds`). Speech and transcription jobs, once done: `{content_type, bytes}` of the output at `download_url`.'),
    download_url: z.string().nullable().describe('Speech and transcription jobs: where to GET the output once done.'),
  })
  .meta({ id: 'Job' });
export type Job = z.infer<typeof Job>;

/** A synchronous request that ran past `jobs.sync_timeout_seconds`: the work goes on as a job. */
export const GenerationTimeoutBody = z
  .object({
    error: ErrorObject.extend({
      code: z.literal('generation_timeout'),
      job_id: z.string().describe('The job that will hold the result: poll it at the job endpoint of the capability.'),
    }),
    job: Job,
  })
  .meta({
    id: 'GenerationTimeoutBody',
    description:
      '524 of a synchronous image or speech request that outlived `jobs.sync_timeout_seconds`: the work was not lost; it continues as the job named here ' +
      '(same result, billed once). Other 524s (every upstream timed out) use the common error body with code upstream_timeout.',
  });
