// The inference routes: text in its three formats (chat completions, Messages, Responses), images
// and video, speech, transcription, embeddings and moderation, with the jobs of the long ones.
import { z } from 'zod';
import * as audio from '../audio.ts';
import { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest } from '../chat.ts';
import { EmbeddingsRequest, EmbeddingsResponse, ModerationRequest, ModerationResponse } from '../embeddings.ts';
import { ErrorBody, errorResponses, inferenceErrors, messagesErrors } from '../errors.ts';
import { ImageGenerationRequest, ImagesResponse } from '../images.ts';
import { GenerationTimeoutBody, Job, JobIdParams } from '../jobs.ts';
import { MessagesCountTokensRequest, MessagesRequest, MessagesResponse, MessagesStreamEvent, MessagesTokenCount } from '../messages.ts';
import { ResponseObject, ResponsesInputTokens, ResponsesInputTokensRequest, ResponsesRequest, ResponsesStreamEvent } from '../responses.ts';
import { c, meta } from './meta.ts';

const jobErrors = errorResponses(401, 403, 404, 500);

/** What native Anthropic clients send besides the body. */
const anthropicHeaders = z.looseObject({
  'anthropic-version': z.string().optional().describe('Date-formatted version string sent by native clients; accepted and ignored.'),
});

export const inferenceRoutes = c.router({
  chatCompletions: {
    method: 'POST',
    path: '/v1/chat/completions',
    body: ChatCompletionRequest,
    responses: { 200: ChatCompletion, ...inferenceErrors },
    summary: 'Create a chat completion',
    description:
      'Chat-completions format for every text model of the catalog; `stream: true` answers with SSE chunks (`data: [DONE]` ends the stream). ' +
      '`web_search_options` turns on web search (native for OpenAI-format and Anthropic upstreams, the gateway’s own search for others; ' +
      'stripped, and named in `X-Gateway-Stripped-Tools`, when neither is available). Response headers: `X-Gateway-Upstream`, `X-RateLimit-*`, `X-Gateway-Overhead-Ms` (the gateway’s own time in ms: all but waiting on upstreams), ' +
      '`X-Gateway-Warnings` (what translating for the chosen upstream changed or dropped, `; `-separated).',
    ...meta({ auth: 'bearer', tag: 'Text', stream: ChatCompletionChunk }),
  },
  messages: {
    method: 'POST',
    path: '/v1/messages',
    body: MessagesRequest,
    headers: anthropicHeaders,
    responses: { 200: MessagesResponse, ...messagesErrors },
    summary: 'Create a message (Messages format)',
    description:
      'Authenticates with `x-api-key` or `Authorization: Bearer`. The `web_search_20250305` server tool works for every model ' +
      '(natively on Anthropic, through the gateway’s own search elsewhere; stripped and named in `X-Gateway-Stripped-Tools` when unavailable). ' +
      'Response headers as for chat completions.',
    ...meta({ auth: 'bearer-or-x-api-key', tag: 'Text', stream: MessagesStreamEvent, errorEnvelope: 'anthropic' }),
  },
  messagesCountTokens: {
    method: 'POST',
    path: '/v1/messages/count_tokens',
    body: MessagesCountTokensRequest,
    headers: anthropicHeaders,
    responses: { 200: MessagesTokenCount, ...messagesErrors },
    summary: 'Count the input tokens of a Messages request',
    description:
      'For every text model. Where the model’s first upstream counts tokens (Anthropic `count_tokens`, Gemini `countTokens`, OpenAI ' +
      '`responses/input_tokens`) it is asked, with the request translated as a generation would be; otherwise, or when it fails, the gateway ' +
      'counts with the o200k_base tokenizer. `X-Gateway-Token-Count` says which: `upstream` or `estimate`. Rate-limited like any request ' +
      '(requests per minute, plan gating); bills nothing and is not in the usage ledger.',
    ...meta({ auth: 'bearer-or-x-api-key', tag: 'Text', errorEnvelope: 'anthropic' }),
  },
  responses: {
    method: 'POST',
    path: '/v1/responses',
    body: ResponsesRequest,
    responses: { 200: ResponseObject, ...inferenceErrors },
    summary: 'Create a response (Responses format)',
    description:
      'Passed through to OpenAI upstreams; translated for the others. Built-in tools other providers cannot run are stripped and listed in the ' +
      '`X-Gateway-Stripped-Tools` response header; `web_search`/`web_search_preview` work everywhere (Anthropic’s server tool, or the gateway’s own search ' +
      'with `url_citation` annotations) and add the configured surcharge to the request’s billed tokens. `previous_response_id`, file ids and references ' +
      'to stored items need an OpenAI model (400 otherwise); references to items this gateway generated are resolved for an hour. ' +
      'Response headers as for chat completions.',
    ...meta({ auth: 'bearer', tag: 'Text', stream: ResponsesStreamEvent }),
  },
  responsesInputTokens: {
    method: 'POST',
    path: '/v1/responses/input_tokens',
    body: ResponsesInputTokensRequest,
    responses: { 200: ResponsesInputTokens, ...inferenceErrors },
    summary: 'Count the input tokens of a Responses request',
    description:
      'For every text model, counted as for `POST /v1/messages/count_tokens` (the model’s first upstream where it counts, passed through to ' +
      'OpenAI; else the gateway’s o200k_base tokenizer); `X-Gateway-Token-Count` says which. Rate-limited like any request; bills nothing.',
    ...meta({ auth: 'bearer', tag: 'Text' }),
  },
  imageGenerations: {
    method: 'POST',
    path: '/v1/images/generations',
    body: ImageGenerationRequest,
    responses: { 200: ImagesResponse, 202: Job, ...inferenceErrors, 524: z.union([GenerationTimeoutBody, ErrorBody]) },
    summary: 'Generate or edit an image, or start a video',
    description:
      'Image models answer 200 with `data[]` (one image: `n` above 1 is refused); `sync: false` and video models answer 202 with a job, whose `result` holds the same ' +
      '`data[]` once done (for video: the hosted MP4 and its `duration_seconds`). `image_url` (up to 5) turns generation into editing on models that can edit. ' +
      'Every `url` is a hosted copy on this gateway (`/v1/files/…`, signed, no credential needed). Fields an upstream cannot take are mapped (size → nearest ' +
      'supported size or aspect ratio, seconds → nearest supported duration) or stripped, each named in `X-Gateway-Warnings` (per upstream model: docs/images.md). ' +
      'A content-policy refusal is 400 `content_policy_violation` with the upstream\'s reason, not billed. A synchronous request still running after ' +
      '`jobs.sync_timeout_seconds` answers 524 `generation_timeout` naming the job that will hold its result (billed once).',
    ...meta({ auth: 'bearer', tag: 'Images' }),
  },
  imageJob: {
    method: 'GET',
    path: '/v1/images/generations/:id',
    pathParams: JobIdParams,
    responses: { 200: Job, ...jobErrors },
    summary: 'Poll an image or video job',
    ...meta({ session: true, auth: 'bearer', tag: 'Images', notFound: { code: 'job_not_found', what: 'job' } }),
  },
  speech: {
    method: 'POST',
    path: '/v1/audio/speech',
    body: audio.SpeechRequest,
    responses: {
      200: c.otherResponse({ contentType: 'audio/mpeg', body: z.unknown() }),
      ...inferenceErrors,
      524: z.union([GenerationTimeoutBody, ErrorBody]),
    },
    summary: 'Text to speech',
    description:
      'Audio bytes (family A: the requested format; B: audio/mpeg; C: audio/wav), streamed as the upstream sends them, or JSON `SpeechWithTimestamps` for family B with `with-timestamps`. ' +
      'The pronunciation dictionary is applied before the text goes upstream (docs/pronunciation.md); skipped phoneme rules are named in the `X-Service-Pronunciation-Warnings` header, ' +
      'fields of another family in `X-Gateway-Warnings`. A voice of another family is 400 `invalid_voice` naming the valid ones; family B input over 4096 characters as sent (tags included) is 400 `input_too_long`. ' +
      'A request not answered within `jobs.sync_timeout_seconds` is 524 `generation_timeout` naming the job that finishes it (billed once). Billed per 1,000 characters as spoken (aliases applied, tags not counted).',
    ...meta({
      auth: 'bearer',
      tag: 'Audio',
      raw: {
        200: {
          'audio/mpeg': 'mp3',
          'audio/opus': 'opus',
          'audio/aac': 'aac',
          'audio/flac': 'flac',
          'audio/wav': '24 kHz mono PCM in a WAV container (family C)',
          'application/json': audio.SpeechWithTimestamps,
        },
      },
    }),
  },
  speechJobCreate: {
    method: 'POST',
    path: '/v1/audio/speech/jobs',
    body: audio.SpeechRequest,
    responses: { 202: Job, ...inferenceErrors },
    summary: 'Submit an async speech job',
    description:
      'Same body and checks as POST /v1/audio/speech; answers 202 with the job at once. Poll `…/status`: `pronunciation_warnings` lists skipped phoneme rules, ' +
      '`warnings` ignored fields, and once done `result` is `{content_type, bytes}`; `…/download` then streams the audio (or the with-timestamps JSON).',
    ...meta({ auth: 'bearer', tag: 'Audio' }),
  },
  speechJobStatus: {
    method: 'GET',
    path: '/v1/audio/speech/jobs/:id/status',
    pathParams: JobIdParams,
    responses: { 200: Job, ...jobErrors },
    summary: 'Poll an async speech job',
    ...meta({ session: true, auth: 'bearer', tag: 'Audio', notFound: { code: 'job_not_found', what: 'job' } }),
  },
  speechJobDownload: {
    method: 'GET',
    path: '/v1/audio/speech/jobs/:id/download',
    pathParams: JobIdParams,
    responses: { 200: c.otherResponse({ contentType: 'audio/mpeg', body: z.unknown() }), 409: ErrorBody, ...jobErrors },
    summary: 'Download the audio of a finished speech job',
    description: 'The audio with the content type of the model family (as POST /v1/audio/speech answers it), or the with-timestamps JSON. 409 job_not_ready until the job is done.',
    ...meta({
      session: true,
      auth: 'bearer',
      tag: 'Audio',
      raw: {
        200: {
          'audio/mpeg': 'mp3 (families A and B)',
          'audio/opus': 'opus',
          'audio/aac': 'aac',
          'audio/flac': 'flac',
          'audio/wav': 'family C',
          'application/json': audio.SpeechWithTimestamps,
        },
      },
      notFound: { code: 'job_not_found', what: 'job' },
    }),
  },
  transcriptions: {
    method: 'POST',
    path: '/v1/audio/transcriptions',
    contentType: 'multipart/form-data',
    body: audio.TranscriptionRequest,
    responses: {
      200: audio.TranscriptionVerbose.or(audio.Transcription),
      ...inferenceErrors,
      415: ErrorBody,
    },
    summary: 'Speech to text',
    description:
      'Multipart form; the file (at most 25 MB: 413 `payload_too_large` as soon as that is crossed) is read as a stream and recognised by its bytes ' +
      '(mp3, mp4, mpeg, mpga, m4a, wav, webm; anything else is 400 `unsupported_audio_format`). Every response format works for every model, rendered by the gateway: ' +
      '`json` (default) and `verbose_json` (OpenAI’s shape; `words` only when the upstream timed them) answer JSON, `text` text/plain, `srt` application/x-subrip, ' +
      '`vtt` text/vtt. Models whose upstream gives no timestamps get timing estimated from the audio’s real duration, said in `X-Gateway-Warnings` and as ' +
      '`timing: "estimated"` in verbose_json (docs/transcription.md). Billed per audio minute (from the container), or by the tokens the upstream reports.',
    ...meta({
      auth: 'bearer',
      tag: 'Audio',
      raw: { 200: { 'text/plain': 'response_format text', 'application/x-subrip': 'response_format srt', 'text/vtt': 'response_format vtt (WebVTT)' } },
    }),
  },
  transcriptionJobCreate: {
    method: 'POST',
    path: '/v1/audio/transcriptions/jobs',
    contentType: 'multipart/form-data',
    body: audio.TranscriptionRequest,
    responses: { 202: Job, ...inferenceErrors, 415: ErrorBody },
    summary: 'Submit an async transcription job',
    description:
      'The same form and checks as POST /v1/audio/transcriptions; the upload is kept in the blob store and 202 answers the job at once. Poll `…/status` ' +
      '(`result` is `{content_type, bytes}` once done, `warnings` says when timing was estimated); `…/download` answers the transcript in the requested format.',
    ...meta({ auth: 'bearer', tag: 'Audio' }),
  },
  transcriptionJobStatus: {
    method: 'GET',
    path: '/v1/audio/transcriptions/jobs/:id/status',
    pathParams: JobIdParams,
    responses: { 200: Job, ...jobErrors },
    summary: 'Poll an async transcription job',
    ...meta({ session: true, auth: 'bearer', tag: 'Audio', notFound: { code: 'job_not_found', what: 'job' } }),
  },
  transcriptionJobDownload: {
    method: 'GET',
    path: '/v1/audio/transcriptions/jobs/:id/download',
    pathParams: JobIdParams,
    responses: { 200: audio.TranscriptionVerbose.or(audio.Transcription), 409: ErrorBody, ...jobErrors },
    summary: 'Download a finished transcription',
    description: 'In the job’s response_format, with its content type (as the synchronous endpoint answers). 409 job_not_ready until done.',
    ...meta({
      session: true,
      auth: 'bearer',
      tag: 'Audio',
      raw: { 200: { 'text/plain': 'response_format text', 'application/x-subrip': 'response_format srt', 'text/vtt': 'response_format vtt (WebVTT)' } },
      notFound: { code: 'job_not_found', what: 'job' },
    }),
  },
  embeddings: {
    method: 'POST',
    path: '/v1/embeddings',
    body: EmbeddingsRequest,
    responses: { 200: EmbeddingsResponse, ...inferenceErrors },
    summary: 'Create embeddings',
    description:
      'OpenAI’s shape for every upstream (Gemini’s vectors are encoded as OpenAI encodes them). Response headers: `X-Gateway-Upstream`, `X-RateLimit-*`, ' +
      '`X-Gateway-Overhead-Ms`, and `X-Gateway-Warnings` (`; `-separated) naming request fields the chosen upstream has no place for, which were dropped.',
    ...meta({ auth: 'bearer', tag: 'Embeddings and moderation' }),
  },
  moderations: {
    method: 'POST',
    path: '/v1/moderations',
    body: ModerationRequest,
    responses: { 200: ModerationResponse, ...inferenceErrors },
    summary: 'Classify text for policy violations',
    description: 'Response headers as for embeddings: `X-Gateway-Upstream`, `X-RateLimit-*`, `X-Gateway-Overhead-Ms`, `X-Gateway-Warnings`.',
    ...meta({ auth: 'bearer', tag: 'Embeddings and moderation' }),
  },
});
