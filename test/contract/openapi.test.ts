import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../contract/openapi.ts';

const committed = JSON.parse(readFileSync(new URL('../../openapi/openapi.json', import.meta.url), 'utf8'));

// The endpoints of docs/api.md, path by path.
const specPaths: [string, string][] = [
  ['get', '/v1/oauth/authorize'],
  ['post', '/v1/oauth/token'],
  ['get', '/v1/oauth/me'],
  ['post', '/v1/oauth/revoke'],
  ['post', '/v1/chat/completions'],
  ['post', '/v1/messages'],
  ['post', '/v1/responses'],
  ['post', '/v1/images/generations'],
  ['get', '/v1/images/generations/{id}'],
  ['post', '/v1/audio/speech'],
  ['post', '/v1/audio/speech/jobs'],
  ['get', '/v1/audio/speech/jobs/{id}/status'],
  ['get', '/v1/audio/speech/jobs/{id}/download'],
  ['post', '/v1/audio/transcriptions'],
  ['post', '/v1/audio/transcriptions/jobs'],
  ['get', '/v1/audio/transcriptions/jobs/{id}/status'],
  ['get', '/v1/audio/transcriptions/jobs/{id}/download'],
  ['post', '/v1/embeddings'],
  ['post', '/v1/moderations'],
  ['get', '/v1/models'],
  ['get', '/v1/models/{model}'],
  ['get', '/v1/models/status'],
  ['get', '/v1/usage'],
];

it('is a valid OpenAPI 3.1 document', async () => {
  const result = await new Validator().validate(committed);
  expect(result.errors).toBeUndefined();
  expect(result.valid).toBe(true);
  expect(committed.openapi).toBe('3.1.0');
});

it('is what the contract generates (not stale)', () => {
  expect(JSON.parse(JSON.stringify(buildOpenApiDocument(committed.info.version)))).toEqual(committed);
});

it.each(specPaths)('documents %s %s', (method, path) => {
  const op = committed.paths[path]?.[method];
  expect(op, `${method} ${path}`).toBeDefined();
  expect(Object.keys(op.responses).length).toBeGreaterThan(1);
});

it('gives every error status of an inference endpoint the part-7 body, and 429 its reset fields', () => {
  const chat = committed.paths['/v1/chat/completions'].post;
  for (const status of ['400', '401', '403', '413', '500', '502', '503']) {
    expect(chat.responses[status].content['application/json'].schema.$ref).toBe('#/components/schemas/ErrorBody');
  }
  expect(chat.responses['429'].content['application/json'].schema.$ref).toBe('#/components/schemas/RateLimitErrorBody');
  const rl = committed.components.schemas.RateLimitErrorBody.properties.error;
  expect(JSON.stringify(rl)).toContain('reset_at');
  expect(chat.responses['200'].content['text/event-stream']).toBeDefined();
  const job = committed.paths['/v1/audio/speech/jobs/{id}/download'].get.responses;
  expect(Object.keys(job)).toEqual(expect.arrayContaining(['200', '401', '403', '404', '409']));
});

it('states the spec ranges in the request schemas', () => {
  const s = committed.components.schemas;
  expect(s.ChatCompletionRequest.properties.temperature).toMatchObject({ minimum: 0, maximum: 2 });
  expect(s.MessagesRequest.properties.temperature).toMatchObject({ minimum: 0, maximum: 1 });
  expect(s.MessagesRequest.required).toEqual(expect.arrayContaining(['model', 'messages', 'max_tokens']));
  expect(s.SpeechRequest.properties.pronunciation_dictionary.maxItems).toBe(100);
  expect(s.PronunciationRule.properties.string_to_replace.maxLength).toBe(200);
  expect(JSON.stringify(s.ImageGenerationRequest.properties.image_url)).toContain('"maxItems":5');
  expect(s.ChatCompletionRequest.description).toContain('safety_identifier');
  expect(s.ChatCompletionRequest.additionalProperties).toEqual({});
  const speech200 = committed.paths['/v1/audio/speech'].post.responses['200'].content;
  expect(Object.keys(speech200)).toEqual(expect.arrayContaining(['audio/mpeg', 'audio/wav', 'application/json']));
  expect(speech200['application/json'].schema.$ref).toBe('#/components/schemas/SpeechWithTimestamps');
});

it('the client package builds on its own', () => {
  const dir = new URL('../../clients/typescript/', import.meta.url).pathname;
  execFileSync(process.execPath, [new URL('../../node_modules/typescript/bin/tsc', import.meta.url).pathname, '-p', dir, '--noEmit'], {
    stdio: 'pipe',
  });
}, 60_000);
