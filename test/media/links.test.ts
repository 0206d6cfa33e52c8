// Absolute links the gateway hands out (hosted copies in image answers, image jobs, the jobs list)
// point at public_url, a trusted proxy's forwarded host, or the gateway's own address: never at
// the request's Host header, which the sender chooses. And the signed token in such a link, which
// is the whole credential to the file, never reaches the log (issue 30).
import { request as httpRequest } from 'node:http';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { mediaConfig, startFakeMedia, type FakeMedia } from './fake-media.ts';

let fake: FakeMedia;
let gw: TestGateway;
let key: string;
const lines: string[] = [];

beforeAll(async () => {
  fake = await startFakeMedia();
  // Forwarded headers are believed from 127.0.0.1 only; tests also connect from 127.0.0.2.
  gw = await startTestGateway({
    config: mediaConfig(fake.url, 'trust_proxy: ["127.0.0.1/32"]\n'),
    env: { JOB_POLL_MS: '25' },
    logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }),
  });
  key = await gw.newKey();
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

type Answer = { status: number; body: any };

/** A request with headers fetch would not send as given (Host), from a chosen local address. */
function call(g: TestGateway, method: string, path: string, opts: { json?: unknown; headers?: Record<string, string>; from?: string; key?: string } = {}): Promise<Answer> {
  const { hostname, port } = new URL(g.url);
  const body = opts.json === undefined ? undefined : JSON.stringify(opts.json);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: hostname,
        port: Number(port),
        method,
        path,
        localAddress: opts.from,
        headers: { authorization: `Bearer ${opts.key ?? key}`, ...(body ? { 'content-type': 'application/json' } : {}), ...opts.headers },
      },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const image = (g: TestGateway, headers: Record<string, string>, from?: string) => call(g, 'POST', '/v1/images/generations', { json: { model: 'gpt-image-1', prompt: 'a cat', response_format: 'url' }, headers, from });
const TOKEN = '[A-Za-z0-9_-]+\\.\\d+\\.[A-Za-z0-9_-]{22}';
const fileLink = (origin: string) => expect.stringMatching(new RegExp(`^${origin.replace(/[.]/g, '\\.')}/v1/files/${TOKEN}$`));

describe('links in answers', () => {
  it('Host: evil.example changes nothing: the image, the image job and the jobs list link to the gateway’s own address', async () => {
    const evil = { host: 'evil.example' };
    const sync = await image(gw, evil);
    expect(sync.status).toBe(200);
    expect(sync.body.data).toEqual([{ url: fileLink(gw.url), content_type: 'image/png' }]);

    const queued = await call(gw, 'POST', '/v1/images/generations', { json: { model: 'gpt-image-1', prompt: 'a dog', response_format: 'url', sync: false }, headers: evil });
    expect(queued.status).toBe(202);
    let job: any;
    for (let i = 0; i < 400 && job?.status !== 'done'; i++) {
      job = (await call(gw, 'GET', `/v1/images/generations/${queued.body.id}`, { headers: evil })).body;
      if (job.status !== 'done') await new Promise((r) => setTimeout(r, 25));
    }
    expect(job).toMatchObject({ status: 'done', result: { data: [{ url: fileLink(gw.url), content_type: 'image/png' }] } });
    const list = await call(gw, 'GET', '/v1/jobs', { headers: evil });
    expect(list.status).toBe(200);
    const listed = list.body.data.find((j: { id: string }) => j.id === queued.body.id);
    expect(listed.result.data[0].url).toEqual(fileLink(gw.url));
  });

  it('X-Forwarded-Host is believed from a proxy trust_proxy names, and only from it', async () => {
    const forwarded = { host: 'evil.example', 'x-forwarded-host': 'gateway.example', 'x-forwarded-proto': 'https' };
    expect((await image(gw, forwarded)).body.data[0].url).toEqual(fileLink('https://gateway.example'));
    // The same headers from 127.0.0.2, which trust_proxy does not name.
    expect((await image(gw, forwarded, '127.0.0.2')).body.data[0].url).toEqual(fileLink(gw.url));
  });

  it('public_url wins over every header', async () => {
    const pub = await startTestGateway({ config: mediaConfig(fake.url, 'trust_proxy: true\npublic_url: https://public.example/\n') });
    try {
      const k = await pub.newKey();
      const json = { model: 'gpt-image-1', prompt: 'a cat', response_format: 'url' };
      const res = await call(pub, 'POST', '/v1/images/generations', { key: k, json, headers: { host: 'evil.example', 'x-forwarded-host': 'evil2.example' } });
      expect(res.body.data[0].url).toEqual(fileLink('https://public.example'));
    } finally {
      await pub.close();
    }
  });
});

describe('request logs', () => {
  it('never contain a hosted file’s token, which would let anyone with the log download the file', async () => {
    const url: string = (await image(gw, {})).body.data[0].url;
    const token = url.split('/v1/files/')[1]!;
    const got = await fetch(url);
    expect(got.status).toBe(200);
    await got.arrayBuffer();
    // A query string after the token does not bring it back.
    expect((await fetch(`${url}?download=1`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 100));
    const log = lines.join('');
    expect(log).toContain('"url":"/v1/files/redacted"');
    expect(log).toContain('"msg":"GET /v1/files/redacted 200');
    expect(log).toContain('GET /v1/files/redacted?download=1 200');
    expect(log).not.toContain(token);
    expect(log).not.toContain(token.split('.')[2]!);
  });
});
