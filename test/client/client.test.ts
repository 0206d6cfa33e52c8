// The generated client against a running gateway: `npm test` type-checks this file (tsc) before
// running it, so a drift between the client types and the server fails twice.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createGatewayClient, type Schemas } from '../../clients/typescript/src/index.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(() => gw?.close());

it('lists the catalog with typed entries', async () => {
  const client = createGatewayClient({ baseUrl: gw.url });
  const { data, error, response } = await client.GET('/v1/models');
  expect(response.status).toBe(200);
  expect(error).toBeUndefined();
  // Anthropic's page only answers a request with `anthropic-version`.
  if (!('object' in data!)) throw new Error('not the gateway’s own list');
  const first: Schemas['CatalogEntry'] = data.data[0]!;
  expect(first.id).toBe('gpt-4o-mini');
  expect(first.context_window).toBeNull();
});

it('manages users and keys through the admin API, and the key authenticates', async () => {
  const admin = createGatewayClient({ baseUrl: gw.url, apiKey: gw.services.adminTokens.known! });
  const user = await admin.POST('/admin/v1/users', { body: { email: 'client@example.com', plan: 'pro' } });
  expect(user.response.status).toBe(201);
  expect(user.data!.plan).toBe('pro');
  const created = await admin.POST('/admin/v1/keys', { body: { user: 'client@example.com', name: 'ci' } });
  const key = created.data!.key;
  expect(key).toMatch(/^mg-[0-9A-Za-z]{43}$/);

  const client = createGatewayClient({ baseUrl: gw.url, apiKey: key });
  const chat = await client.POST('/v1/chat/completions', { body: { model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] } });
  expect(chat.response.status).toBe(400);
  expect(chat.error?.error.code).toBe('model_not_found');

  const dup = await admin.POST('/admin/v1/users', { body: { email: 'client@example.com' } });
  expect(dup.response.status).toBe(409);
  expect(dup.error?.error.code).toBe('user_exists');

  const list = await admin.GET('/admin/v1/keys', { params: { query: { user: 'client@example.com' } } });
  expect(list.data!.data.map((k) => k.name)).toEqual(['ci']);
  expect(JSON.stringify(list.data)).not.toContain(key);
});

it('reports errors in the typed error body', async () => {
  const client = createGatewayClient({ baseUrl: gw.url, apiKey: 'mg-wrong' });
  const res = await client.POST('/v1/embeddings', { body: { model: 'x', input: 'y' } });
  expect(res.response.status).toBe(401);
  expect(res.error?.error.type).toBe('authentication_error');
});
