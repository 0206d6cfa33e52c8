// A job's request is stored as it came (a JSON column that refuses `\u0000`): a body holding what it
// cannot store is a 400 naming the field, before anything is reserved or sent upstream — for a job
// submitted as one, and for a synchronous request that may become one (issue 42; it was a 500).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { errorBody, keyCounters } from '../helpers/gateway.ts';
import { startDashboardWorld, type DashboardWorld } from '../dashboard/setup.ts';

let w: DashboardWorld;
let key: string;
beforeAll(async () => {
  w = await startDashboardWorld();
  key = await w.gw.newKey('pro');
});
afterAll(() => w?.close());

it('refuses a NUL or an unpaired surrogate in what a job would store, naming the field, and reserves nothing', async () => {
  const keyId = (await w.gw.services.keys.authenticate(key))!.keyId;
  const before = w.media.requests.length;
  for (const json of [
    { model: 'veo', prompt: 'a cat\u0000' }, // a video: always a job
    { model: 'gpt-image-1', prompt: 'a cat', async: true, user: 'u\ud800' }, // an image job
    { model: 'gpt-image-1', prompt: 'a\u0000cat' }, // a synchronous image, which outliving its time limit would make a job
  ]) {
    const res = await w.gw.fetch('/v1/images/generations', { method: 'POST', key, json });
    expect(res.status, JSON.stringify(json)).toBe(400);
    const e = await errorBody(res);
    expect(e).toMatchObject({ type: 'invalid_request_error', code: 'invalid_parameter' });
    expect(['prompt', 'user']).toContain(e.param);
    expect(e.message).toContain('NUL character or an unpaired surrogate');
  }
  expect(w.media.requests.length).toBe(before);
  expect(await keyCounters(w.gw.services, keyId)).toMatchObject({ reserved: 0, activeJobs: 0 });
});
