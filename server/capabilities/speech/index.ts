// Text to speech (docs/api.md, "Speech"): `POST /v1/audio/speech` (audio as it streams, or ElevenLabs'
// timestamps JSON), and its jobs.
import type { CapabilityDescriptor } from '../descriptor.ts';
import { jobDownloadRoute, jobStatusRoute } from '../shared/job-routes.ts';
import { SPEECH_JOB, speech, speechJobKind, submitSpeechJob } from './speak.ts';

export const speechCapability: CapabilityDescriptor = {
  routes: {
    speech: {
      capability: 'speech',
      async run(deps, { body }, call) {
        const r = await speech(deps, call, body);
        const meta = { headers: r.headers, upstreamMs: r.upstreamMs };
        if (r.kind === 'audio') return { status: 200, body: r.body, contentType: r.contentType, contentLength: r.length, ...meta };
        // The timestamps JSON on a route whose success is raw audio: sent as text, typed as JSON.
        if (r.status === 200) return { status: 200, body: JSON.stringify(r.body), contentType: 'application/json; charset=utf-8', ...meta };
        return { status: r.status, body: r.body, ...meta };
      },
    },
    speechJobCreate: { capability: 'speech', run: async (deps, { body }, call) => ({ status: 202, body: await submitSpeechJob(deps, call.principal, body) }) },
    speechJobStatus: jobStatusRoute('speech', [SPEECH_JOB]),
    speechJobDownload: jobDownloadRoute('speech', [SPEECH_JOB]),
  },
  jobKinds: (deps) => [speechJobKind(deps)],
};
