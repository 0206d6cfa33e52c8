// Text to speech (docs/api.md, "Speech"): three families (each vendor's speech adapter says which it is),
// the pronunciation dictionary applied before the text goes upstream (speech/pronunciation.ts),
// audio streamed to the client as the upstream sends it. Synchronous requests that outlive
// `jobs.sync_timeout_seconds` become the job that finishes them (524); `/v1/audio/speech/jobs`
// submits one directly. Billed per 1,000 characters as spoken (aliases applied, tags not counted).
import { Readable } from 'node:stream';
import type { z } from 'zod';
import type { SpeechRequest, SpeechWithTimestamps } from '../../../contract/audio.ts';
import type { GenerationTimeoutBody, Job } from '../../../contract/jobs.ts';
import type { Principal } from '../../auth/principal.ts';
import { unitTokens } from '../../config/billing-rules.ts';
import { errors } from '../../runtime/errors.ts';
import type { JobDone, JobKind } from '../../jobs/kinds.ts';
import { jobOrigin } from '../../jobs/service.ts';
import { FAMILY_FIELDS, type SpeechAudio, type SpeechFamily, type SpeechInput, type SpeechTimestamps } from '../../providers/speech.ts';
import type { CapabilityDeps } from '../deps.ts';
import type { Caller } from '../descriptor.ts';
import { applyPronunciation } from '../../speech/pronunciation.ts';
import { gatewayHeaders, headerSafe } from '../shared/gateway-headers.ts';
import { syncOrJob } from '../shared/sync-or-job.ts';
import { exchange, type Exchanged } from '../../pipeline/exchange.ts';
import type { AttemptLog } from '../../pipeline/pipeline.ts';
import type { Outcome, Target } from '../../pipeline/types.ts';

type Body = z.infer<typeof SpeechRequest>;
/** A speech job's stored request: the client's validated body (held as JSON, unchecked when read). */
const storedRequest = (request: unknown) => request as Body;
type JobObject = z.infer<typeof Job>;

export const SPEECH_JOB = 'speech.generation';

/** One upstream able to read the request: its family, the text and voice it is sent, what is spoken. */
type Prepared = { target: Target<'speech'>; family: SpeechFamily; input: SpeechInput; spoken: string; pronunciationWarnings: string[] };

/**
 * The model's upstreams that can read this request: the voice is one of their family's, and the
 * text (tags included) is within the family's cap, if it has one (family B: 4096 characters). None: 400 naming the
 * valid voices, or the cap.
 */
function prepare(services: CapabilityDeps, body: Body): { model: NonNullable<ReturnType<CapabilityDeps['catalog']['model']>>; prepared: Prepared[] } {
  const { model, targets } = services.pipeline.targets(body.model, 'speech');
  const prepared: Prepared[] = [];
  let refusal: ReturnType<typeof errors.invalid> | null = null;
  for (const target of targets) {
    const speaker = target.adapter;
    const family = speaker.family;
    const voice = speaker.resolveVoice(body.voice, target.provider);
    if (!voice) {
      refusal ??= errors.invalid(
        `The voice '${body.voice}' is not a voice of the model '${model.id}' (family ${family}); use one of: ${speaker.voiceNames(target.provider).join(', ')}.`,
        'voice',
        'invalid_voice',
      );
      continue;
    }
    const p = applyPronunciation(body.input, body.pronunciation_dictionary ?? [], speaker.phonemes(target.upstreamModel));
    if (speaker.maxCharacters !== undefined && p.text.length > speaker.maxCharacters) {
      refusal ??= errors.invalid(
        `The input is ${p.text.length} characters as sent (phoneme tags included); the model '${model.id}' takes at most ${speaker.maxCharacters}: split it into several requests.`,
        'input',
        'input_too_long',
      );
      continue;
    }
    prepared.push({ target, family, input: { body, text: p.text, voice }, spoken: p.spoken, pronunciationWarnings: p.warnings });
  }
  if (!prepared.length) throw refusal!;
  return { model, prepared };
}

/** A target with what it is sent: the plan hands each attempt a copy of it (with its key) that keeps `prepared`. */
type Candidate = Target<'speech'> & { prepared: Prepared };

type Spoken = { ex: Exchanged<SpeechAudio | SpeechTimestamps, Candidate>; p: Prepared };

/** `requestId`: whose trail the attempts go to (the request's, or the job's in a run). */
async function speak(services: CapabilityDeps, modelId: string, prepared: Prepared[], signal: AbortSignal, requestId: string, log?: AttemptLog): Promise<Spoken> {
  const candidates: Candidate[] = prepared.map((p) => ({ ...p.target, prepared: p }));
  const ex = await exchange(
    services.pipeline,
    modelId,
    candidates,
    (t, call) => {
      const p = t.prepared;
      const reads: readonly string[] = t.adapter.reads;
      const ignored = FAMILY_FIELDS.filter((f) => (p.input.body as Record<string, unknown>)[f] !== undefined && !reads.includes(f));
      if (ignored.length) call.warn(`ignored by this model (family ${p.family}): ${ignored.join(', ')}`);
      return t.adapter.run(p.input, { ...call, signal });
    },
    { log, requestId, capability: 'speech' },
  );
  return { ex, p: ex.target.prepared };
}

const billingOf = ({ ex, p }: Spoken): Outcome => ({
  provider: ex.target.provider.id,
  upstreamModel: ex.target.upstreamModel,
  usage: null,
  metered: { unit: 'character', quantity: p.spoken.length },
  estimated: false,
});

const timestampsBody = (s: SpeechTimestamps, warnings: string[]): z.infer<typeof SpeechWithTimestamps> => ({ ...s.json, pronunciation_warnings: warnings });

function jobDone(s: Spoken): JobDone {
  const answer = s.ex.value;
  const output =
    answer.kind === 'audio'
      ? { body: answer.body, contentType: answer.contentType }
      : { body: Readable.from([Buffer.from(JSON.stringify(timestampsBody(answer, s.p.pronunciationWarnings)))]), contentType: 'application/json' };
  return { type: 'done', output, billing: billingOf(s), warnings: s.ex.warnings, pronunciationWarnings: s.p.pronunciationWarnings };
}

/** The speech job kind, run with `services`. */
export const speechJobKind = (services: CapabilityDeps): JobKind => ({
  kind: SPEECH_JOB,
  capability: 'speech',
  downloadPath: (id) => `/v1/audio/speech/jobs/${id}/download`,
  async run({ job, signal }) {
    const { prepared } = prepare(services, storedRequest(job.request));
    return jobDone(await speak(services, job.model, prepared, signal, job.id));
  },
});

const reserveTokens = (model: Parameters<typeof unitTokens>[0], prepared: Prepared[]) => unitTokens(model, 'character', Math.max(...prepared.map((p) => p.spoken.length)));

export type SpeechAnswer =
  | { status: 200; kind: 'audio'; body: Readable; contentType: string; length: number | null; headers: Record<string, string>; upstreamMs: number }
  | { status: 200; kind: 'json'; body: z.infer<typeof SpeechWithTimestamps>; headers: Record<string, string>; upstreamMs: number }
  | { status: 524; kind: 'json'; body: z.infer<typeof GenerationTimeoutBody>; headers: Record<string, string>; upstreamMs: number };

const pronunciationHeader = (warnings: string[]): Record<string, string> => (warnings.length ? { 'x-service-pronunciation-warnings': headerSafe(warnings.join('; ')) } : {});

export async function speech(services: CapabilityDeps, c: Caller, body: Body): Promise<SpeechAnswer> {
  const { model, prepared } = prepare(services, body);
  const origin = jobOrigin({ principal: c.principal, kind: SPEECH_JOB, model: model.id, request: body });
  const meter = await services.pipeline.admit({ requestId: origin.id, principal: c.principal, model: model.id, endpoint: 'speech', reserveTokens: reserveTokens(model, prepared), ttlMs: services.jobs.maxRunMs });
  const abort = new AbortController();
  const outcome = await syncOrJob(
    services,
    { origin, meter, abort, what: 'speech', pollPath: `/v1/audio/speech/jobs/${origin.id}/status`, show: (job) => job },
    speak(services, model.id, prepared, abort.signal, c.requestId, c.log),
    jobDone,
  );
  if ('timeout' in outcome) return { status: 524, kind: 'json', body: outcome.timeout, headers: meter.headers, upstreamMs: 0 };
  const s = outcome.done;
  // The upstream has started answering: the audio is made, and billed.
  await meter.settle(billingOf(s));
  const headers = { ...meter.headers, ...gatewayHeaders(s.ex.upstream, s.ex.warnings), ...pronunciationHeader(s.p.pronunciationWarnings) };
  const answer = s.ex.value;
  if (answer.kind === 'timestamps') return { status: 200, kind: 'json', body: timestampsBody(answer, s.p.pronunciationWarnings), headers, upstreamMs: s.ex.upstreamMs };
  return { status: 200, kind: 'audio', body: answer.body, contentType: answer.contentType, length: answer.length, headers, upstreamMs: s.ex.upstreamMs };
}

export async function submitSpeechJob(services: CapabilityDeps, principal: Principal, body: Body): Promise<JobObject> {
  const { model, prepared } = prepare(services, body);
  return services.jobs.submit({ principal, kind: SPEECH_JOB, model: model.id, request: body, reserveTokens: reserveTokens(model, prepared) });
}
