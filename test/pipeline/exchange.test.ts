// One exchange with the first upstream that answers (embeddings, moderation, the media capabilities):
// the answered attempt's warnings only, the time waited on upstreams only, health for every attempt.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createMetrics } from '../../server/runtime/metrics.ts';
import { gatewayHeaders } from '../../server/capabilities/shared/gateway-headers.ts';
import { exchange } from '../../server/pipeline/exchange.ts';
import { RequestPipeline, type PipelineDeps } from '../../server/pipeline/pipeline.ts';
import { UpstreamError } from '../../server/upstream/errors.ts';
import type { Target } from '../../server/routing/targets.ts';
import { RequestTrails } from '../../server/observe/request-trail.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function fakePipeline() {
  const recorded: [string, boolean][] = [];
  const health = { record: (_m: string, provider: string, ok: boolean) => (recorded.push([provider, ok]), 0), recordLateFailure: () => {} };
  // A router that tries the targets as given (no pools, no breakers).
  const router = { plan: (_m: unknown, targets: unknown[]) => targets };
  const deps = { health, metrics: createMetrics(), catalog: { model: (id: string) => ({ id }) }, router, trails: new RequestTrails() } as unknown as PipelineDeps;
  return { pipeline: new RequestPipeline(deps, []), recorded };
}

afterEach(() => void vi.useRealTimers());

const target = (id: string) => ({ provider: { id, type: 'openai', api_key: 'k' }, upstreamModel: `${id}-model`, adapter: {} }) as unknown as Target<'embeddings'>;

describe('exchange', () => {
  it('fails over; reports the warnings of the attempt that answered, not of the failed one; counts only upstream waits', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'performance'] });
    const { pipeline, recorded } = fakePipeline();
    const answered = exchange(
      pipeline,
      'm',
      [target('down'), target('up')],
      async (t, call) => {
        call.warn(`from ${t.provider.id}`);
        await call.waitOn(sleep(60));
        if (t.provider.id === 'down') throw new UpstreamError("provider 'down': answered HTTP 404: gone", 404, true, 'upstream_error');
        await sleep(80); // the gateway's own work (decoding): not upstream time
        return 'answer';
      },
      { capability: 'embeddings' },
    );
    await vi.advanceTimersByTimeAsync(1_000);
    const r = await answered;
    expect(r.value).toBe('answer');
    expect(r.target.provider.id).toBe('up');
    expect(r.warnings).toEqual(['from up']);
    expect(recorded).toEqual([
      ['down', false],
      ['up', true],
    ]);
    expect(r.upstream).toBe('up');
    // Two waits of 60 ms (a fake clock): not the 80 ms of our own work.
    expect(r.upstreamMs).toBe(120);
  });
});

describe('gatewayHeaders', () => {
  it('names the upstream, joins warnings into one header, and escapes what a header cannot carry', () => {
    expect(gatewayHeaders('openai', [])).toEqual({ 'x-gateway-upstream': 'openai' });
    expect(gatewayHeaders('gemini', ['a dropped', 'b lowered'])).toEqual({ 'x-gateway-upstream': 'gemini', 'x-gateway-warnings': 'a dropped; b lowered' });
    expect(gatewayHeaders('g', ['dropped: 名前\n'])['x-gateway-warnings']).toBe('dropped: \\u540d\\u524d\\u000a');
  });
});
