import { api, call, type Schemas, type Session } from '../api.ts';
import { when } from '../format.ts';
import { Badge, Cell, EmptyState, Loaded, Loading, ModelId, Page, Snippet, Table, useLoad } from '../ui.tsx';
import { useExampleModel } from './keys.tsx';

type Job = Schemas['Job'];

const statusKind: Record<Job['status'], 'ok' | 'warn' | 'bad' | 'neutral' | 'info'> = {
  queued: 'neutral',
  in_progress: 'info',
  done: 'ok',
  failed: 'bad',
  cancelled: 'warn',
  expired: 'neutral',
};

type Output = { url: string; content_type?: string; duration_seconds?: number };
const outputsOf = (job: Job): Output[] => ((job.result as { data?: Output[] } | null)?.data ?? []).filter((d) => typeof d?.url === 'string');

function kindOf(job: Job): string {
  if (job.object === 'audio.speech.job') return 'Speech';
  if (job.object === 'audio.transcription.job') return 'Transcription';
  if (job.object === 'video.generation.job') return 'Video';
  const outs = outputsOf(job);
  if (outs.some((o) => o.content_type?.startsWith('video/') || o.duration_seconds !== undefined)) return 'Video';
  return outs.length ? 'Image' : 'Image or video';
}

function Downloads({ job }: { job: Job }) {
  if (job.status !== 'done') return <span class="muted">—</span>;
  if (job.download_url) {
    return (
      <a href={job.download_url} download data-external>
        Download
      </a>
    );
  }
  const outs = outputsOf(job);
  return (
    <>
      {outs.map((o, i) => (
        <a href={o.url} target="_blank" rel="noopener" data-external>
          {outs.length > 1 ? `File ${i + 1}` : 'Open'}
        </a>
      ))}
    </>
  );
}

/** An image made as a job (`sync: false`), or a video (always a job): neither needs a voice or a file. */
const JOB_ENDPOINTS: Schemas['ModelEndpoint'][] = ['images', 'video'];
const jobExample = (model: string) => `curl ${location.origin}/v1/images/generations \\
  -H "Authorization: Bearer $MODEL_GATEWAY_KEY" \\
  -H "Content-Type: application/json" \\
  -d '{"model": "${model}", "prompt": "a lighthouse at dusk", "sync": false}'`;

export function Jobs(_: { session: Session }) {
  const state = useLoad(async () => (await call(api.GET('/v1/jobs', { params: { query: { limit: 50 } } }))).data);
  const example = useExampleModel(JOB_ENDPOINTS);
  return (
    <Page
      title="Jobs"
      intro="Asynchronous images, video, speech and transcriptions of all your keys, newest first. Outputs are kept until the job expires."
      actions={
        <button type="button" class="secondary small" onClick={state.reload}>
          Refresh
        </button>
      }
    >
      <Loaded state={state} what="your jobs">
        {(jobs) =>
          jobs.length === 0 ? (
            <EmptyState title="No jobs yet">
              <p>Long work runs as a job: video, or any image, speech or transcription request sent to its job endpoint.{example ? ' For example:' : ''}</p>
              {example === undefined ? <Loading what="an example request" /> : example && <Snippet text={jobExample(example)} label="Example job request" />}
            </EmptyState>
          ) : (
            <Table caption="Your recent jobs" columns={['Kind', 'Model', 'Status', 'Created', 'Warnings', 'Output']}>
              {jobs.map((j) => (
                <tr id={`job-${j.id}`}>
                  <Cell label="Kind">
                    {kindOf(j)}
                    <br />
                    <small class="muted">{j.id}</small>
                  </Cell>
                  <Cell label="Model" class="wide">
                    <ModelId id={j.model} />
                  </Cell>
                  <Cell label="Status">
                    <Badge kind={statusKind[j.status]}>{j.status.replace('_', ' ')}</Badge>
                    {j.error && <small class="error-text"> {j.error.message}</small>}
                  </Cell>
                  <Cell label="Created">{when(j.created_at)}</Cell>
                  <Cell label="Warnings">
                    {[...j.warnings, ...j.pronunciation_warnings].length ? (
                      <ul class="plain small">
                        {[...j.warnings, ...j.pronunciation_warnings].map((w) => (
                          <li>{w}</li>
                        ))}
                      </ul>
                    ) : (
                      <span class="muted">none</span>
                    )}
                  </Cell>
                  <Cell label="Output">
                    <Downloads job={j} />
                  </Cell>
                </tr>
              ))}
            </Table>
          )
        }
      </Loaded>
    </Page>
  );
}
