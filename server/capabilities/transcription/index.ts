// Speech to text (docs/api.md, "Transcription"): `POST /v1/audio/transcriptions` (multipart: the audio is stored as it
// streams in), and its jobs.
import type { CapabilityDescriptor } from '../descriptor.ts';
import { jobDownloadRoute, jobStatusRoute } from '../shared/job-routes.ts';
import { TRANSCRIPTION_JOB, submitTranscriptionJob, transcription, transcriptionJobKind, type TranscriptionBody } from './transcribe.ts';

export const transcriptionCapability: CapabilityDescriptor = {
  routes: {
    transcriptions: {
      capability: 'transcription',
      upload: 'file',
      async run(deps, { body }: { body: TranscriptionBody }, call) {
        const r = await transcription(deps, { ...call, upload: call.upload! }, body);
        return { status: 200, body: r.body, contentType: r.contentType, headers: r.headers, upstreamMs: r.upstreamMs };
      },
    },
    transcriptionJobCreate: {
      capability: 'transcription',
      upload: 'blob',
      run: async (deps, { body }: { body: TranscriptionBody }, call) => ({ status: 202, body: await submitTranscriptionJob(deps, call.principal, call.upload!, body) }),
    },
    transcriptionJobStatus: jobStatusRoute('transcription', [TRANSCRIPTION_JOB]),
    transcriptionJobDownload: jobDownloadRoute('transcription', [TRANSCRIPTION_JOB]),
  },
  jobKinds: (deps) => [transcriptionJobKind(deps)],
};
