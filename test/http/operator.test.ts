import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(() => gw?.close());

it('healthz and readyz', async () => {
  expect(await (await gw.fetch('/healthz')).json()).toEqual({ status: 'ok' });
  const ready = await gw.fetch('/readyz');
  expect(ready.status).toBe(200);
  expect(await ready.json()).toEqual({ status: 'ok', checks: { 'database (embedded)': 'ok', 'counters (memory)': 'ok' } });
});

it('readyz answers 503 naming the store that is down', async () => {
  const other = await startTestGateway();
  try {
    await other.services.db.close();
    const res = await other.fetch('/readyz');
    expect(res.status).toBe(503);
    const body: any = await res.json();
    expect(body.status).toBe('unavailable');
    expect(body.checks['database (embedded)']).toMatch(/^unavailable/);
    expect(body.checks['counters (memory)']).toBe('ok');
  } finally {
    await other.close().catch(() => {});
  }
});

it('metrics in the Prometheus text format, counting requests by route template', async () => {
  await gw.fetch('/v1/models');
  await gw.fetch('/v1/nope');
  const text = await (await gw.fetch('/metrics')).text();
  expect(text).toMatch(/gateway_http_requests_total\{method="GET",route="\/v1\/models",status="200"\} \d+/);
  expect(text).toMatch(/gateway_http_requests_total\{method="GET",route="unmatched",status="404"\} \d+/);
  expect(text).toContain('# TYPE gateway_http_request_duration_seconds histogram');
  expect(text).toContain('# TYPE gateway_upstream_attempts_total counter');
});

it('serves the committed OpenAPI document and a browsable reference', async () => {
  const served = await (await gw.fetch('/openapi.json')).json();
  const committed = JSON.parse(readFileSync(new URL('../../openapi/openapi.json', import.meta.url), 'utf8'));
  expect(served).toEqual(committed);
  const docs = await gw.fetch('/docs/');
  expect(docs.status).toBe(200);
  expect(docs.headers.get('content-type')).toContain('text/html');
  expect(await docs.text()).toContain('swagger-ui');
  const spec = await gw.fetch('/docs/json');
  expect(((await spec.json()) as any).openapi).toBe('3.1.0');
});
