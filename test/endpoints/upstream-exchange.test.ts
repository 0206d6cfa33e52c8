// One exchange with the first upstream that answers (embeddings, moderation, the media capabilities):
// the answered attempt's warnings only, the time waited on upstreams only, health for every attempt.
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../server/runtime/metrics.ts';
import { gatewayHeaders } from '../../server/capabilities/shared/gateway-headers.ts';
import { exchange } from '../../server/capabilities/shared/upstream-exchange.ts';
import { UpstreamError } from '../../server/upstream/errors.ts';
import type { Target } from '../../server/routing/targets.ts';
import type { Services } from '../../server/http/services.ts';
import { RequestTrails } from '../../server/observe/request-trail.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function fakeServices() {
  const recorded: [string, boolean][] = [];
  const health = { record: (_m: string, provider: string, ok: boolean) => (recorded.push([provider, ok]), 0), recordLateFailure: () => {} };
  // A model the catalog does not know: its targets are tried as given (the router plans known models).
  return { services: { health, metrics: createMetrics(), catalog: { model: () => undefined }, trails: new RequestTrails() } as unknown as Services, recorded };
}

const target = (id: string) => ({ provider: { id, type: 'openai', api_key: 'k' }, upstreamModel: `${id}-model`, adapter: {} }) as unknown as Target<'embeddings'>;

describe('exchange', () => {
  it('fails over; reports the warnings of the attempt that answered, not of the failed one; counts only upstream waits', async () => {
    const { services, recorded } = fakeServices();
    const r = await exchange(services, 'm', [target('down'), target('up')], async (t, call) => {
      call.warn(`from ${t.provider.id}`);
      await call.waitOn(sleep(60));
      if (t.provider.id === 'down') throw new UpstreamError("provider 'down': answered HTTP 404: gone", 404, true, 'upstream_error');
      await sleep(80); // the gateway's own work (decoding): not upstream time
      return 'answer';
    });
    expect(r.value).toBe('answer');
    expect(r.target.provider.id).toBe('up');
    expect(r.warnings).toEqual(['from up']);
    expect(recorded).toEqual([
      ['down', false],
      ['up', true],
    ]);
    // Two waits of 60 ms; not the 80 ms of our own work.
    expect(r.upstreamMs).toBeGreaterThanOrEqual(115);
    expect(r.upstreamMs).toBeLessThan(190);
  });
});

describe('gatewayHeaders', () => {
  it('names the upstream, joins warnings into one header, and escapes what a header cannot carry', () => {
    expect(gatewayHeaders('openai', [])).toEqual({ 'x-gateway-upstream': 'openai' });
    expect(gatewayHeaders('gemini', ['a dropped', 'b lowered'])).toEqual({ 'x-gateway-upstream': 'gemini', 'x-gateway-warnings': 'a dropped; b lowered' });
    expect(gatewayHeaders('g', ['dropped: 名前\n'])['x-gateway-warnings']).toBe('dropped: \\u540d\\u524d\\u000a');
  });
});
