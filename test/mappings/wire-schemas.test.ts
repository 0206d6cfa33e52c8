// Every real recorded upstream answer in the shared fixtures, parsed with the schema of what the
// gateway reads from it (wire-schemas.ts). Hand-edited files are left out as the fixtures' README
// and vercel+ai/CLASSIFICATION.tsv list them; so are formats the gateway never reads.
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { FIREBASE, VERCEL, chunkLines, fixtureFiles, fixtureJson, fixtureText, sseEvents } from './fixtures.ts';
import * as W from './wire-schemas.ts';

/** vercel+ai files its CLASSIFICATION.tsv calls recorded (not SYNTHETIC/EDITED, not CHECK). */
const recordedVercel = new Set(
  fixtureText('vercel+ai/CLASSIFICATION.tsv')
    .split('\n')
    .slice(1)
    .map((row) => row.split('\t'))
    .filter((cols) => cols[2]?.startsWith('recorded'))
    .map((cols) => `vercel+ai/${cols[0]}`),
);
const vercel = (dir: string, suffix: string) => fixtureFiles(`${VERCEL}${dir}`).filter((f) => f.endsWith(suffix) && recordedVercel.has(f));

/** Firebase mock responses minus the ones its README says were altered on purpose. */
const firebase = (dir: string, prefix: string) =>
  fixtureFiles(`${FIREBASE}${dir}`).filter((f) => {
    const name = f.split('/').pop()!;
    if (!name.startsWith(prefix) || /unknown-|invalid-|malformed-/.test(name) || name === 'streaming-failure-error-mid-stream.txt') return false;
    // Imagen `predict` answers (generate-images) are not generateContent answers.
    return !name.includes('generate-images') && !fixtureText(f).includes('FAKE_');
  });

/** Gemini 3 streamed function-call arguments (`partialArgs`, Vertex's opt-in `streamFunctionCallArguments`): never asked for by the gateway. */
const PARTIAL_ARGS = [
  'google-stream-no-args-tool-call.chunks.txt',
  'google-stream-tool-call-arguments.chunks.txt',
  'google-stream-tool-call-array-arguments-missing-terminal-function-call.chunks.txt',
  'google-vertex-stream-tool-call-arguments-nested.1.chunks.txt',
];

function problems(schema: z.ZodType, value: unknown, where = ''): string[] {
  const r = schema.safeParse(value);
  return r.success ? [] : r.error.issues.map((i) => `${where}${i.path.join('.')}: ${i.message}`);
}

/** An error body: a top-level `error` object (a Response object's `error: null` is not one). */
const hasError = (value: unknown) => {
  const error: unknown = value !== null && typeof value === 'object' && 'error' in value ? value.error : null;
  return error !== null && typeof error === 'object';
};
/** A JSON body: its schema, or the provider's error envelope when it is an error body. */
const jsonProblems = (file: string, schema: z.ZodType, error: z.ZodType) => {
  const body = fixtureJson(file);
  return problems(hasError(body) ? error : schema, body);
};
/** One payload per line. */
const lineProblems = (file: string, schema: z.ZodType) => chunkLines(file).flatMap((line, i) => problems(schema, JSON.parse(line), `line ${i + 1}: `));

describe('OpenAI chat completions (OpenAI, Azure OpenAI, xAI)', () => {
  const bodies = [...vercel('openai/src/chat', '.json'), ...vercel('openai-compatible/src/chat', '.json')];
  const streams = [...vercel('openai/src/chat', '.chunks.txt'), ...vercel('openai-compatible/src/chat', '.chunks.txt')];

  it('finds the recordings', () => {
    expect([bodies.length, streams.length]).toEqual([4, 4]);
  });

  it.each(bodies)('%s', (file) => {
    expect(jsonProblems(file, W.ChatCompletion, W.OpenAIError)).toEqual([]);
  });

  it.each(streams)('%s', (file) => {
    expect(lineProblems(file, W.ChatCompletionChunk)).toEqual([]);
  });
});

describe('OpenAI Responses', () => {
  const bodies = [...vercel('openai/src/responses', '.json'), ...vercel('open-responses/src/responses', '.json')];
  const streams = [...vercel('openai/src/responses', '.chunks.txt'), ...vercel('open-responses/src/responses', '.chunks.txt')];

  it('finds the recordings', () => {
    expect([bodies.length, streams.length]).toEqual([31, 31]);
  });

  it.each(bodies)('%s', (file) => {
    expect(jsonProblems(file, W.ResponseObject, W.OpenAIError)).toEqual([]);
  });

  it.each(streams)('%s', (file) => {
    expect(lineProblems(file, W.ResponsesStreamEvent)).toEqual([]);
  });
});

describe('Anthropic Messages', () => {
  const bodies = vercel('anthropic/src/__fixtures__', '.json');
  const streams = vercel('anthropic/src/__fixtures__', '.chunks.txt');

  it('finds the recordings', () => {
    expect([bodies.length, streams.length]).toEqual([27, 25]);
  });

  it.each(bodies)('%s', (file) => {
    expect(problems(W.AnthropicMessage, fixtureJson(file))).toEqual([]);
  });

  it.each(streams)('%s', (file) => {
    expect(lineProblems(file, W.AnthropicStreamEvent)).toEqual([]);
  });
});

describe('Gemini generateContent', () => {
  const bodies = vercel('google/src/__fixtures__', '.json');
  const streams = vercel('google/src/__fixtures__', '.chunks.txt').filter((f) => !PARTIAL_ARGS.some((p) => f.endsWith(p)));
  const unary = [...firebase('googleai', 'unary-'), ...firebase('vertexai', 'unary-')].filter((f) => f.endsWith('.json'));
  const sse = [...firebase('googleai', 'streaming-'), ...firebase('vertexai', 'streaming-')];

  it('finds the recordings', () => {
    expect([bodies.length, streams.length, unary.length, sse.length]).toEqual([6, 5, 65, 32]);
  });

  it.each([...bodies, ...unary])('%s', (file) => {
    expect(jsonProblems(file, W.GenerateContentResponse, W.GoogleError)).toEqual([]);
  });

  it.each(streams)('%s', (file) => {
    expect(lineProblems(file, W.GenerateContentResponse)).toEqual([]);
  });

  it.each(sse)('%s', (file) => {
    // A stream refused before it started is a plain JSON error body.
    if (fixtureText(file).trimStart().startsWith('{')) return expect(problems(W.GoogleError, fixtureJson(file))).toEqual([]);
    const events = sseEvents(file);
    expect(events.length).toBeGreaterThan(0);
    expect(events.flatMap((e, i) => problems(hasError(JSON.parse(e.data)) ? W.GoogleError : W.GenerateContentResponse, JSON.parse(e.data), `event ${i + 1}: `))).toEqual([]);
  });

  it.each(PARTIAL_ARGS)('%s: streamed partial arguments (a function call without a name) are outside what the gateway reads', (name) => {
    const lines = chunkLines(`${VERCEL}google/src/__fixtures__/${name}`);
    expect(lines.some((l) => problems(W.GenerateContentResponse, JSON.parse(l)).length > 0)).toBe(true);
  });
});

describe('embeddings, transcription, images', () => {
  it('OpenAI embeddings (openai-embedding.json)', () => {
    const files = vercel('openai/src/embedding', '.json');
    expect(files).toHaveLength(1);
    for (const file of files) expect(problems(W.OpenAIEmbeddings, fixtureJson(file))).toEqual([]);
  });

  it('Gemini batchEmbedContents: the schema the adapter reads (no recording exists; the embeddings in Google’s documented shape)', () => {
    expect(problems(W.GeminiBatchEmbeddings, { embeddings: [{ values: [0.1, -0.2] }, { values: [0.3] }] })).toEqual([]);
  });

  it('OpenAI whisper-1 verbose_json (openai-transcription.json)', () => {
    expect(problems(W.OpenAITranscription, fixtureJson(`${VERCEL}openai/src/transcription/__fixtures__/openai-transcription.json`))).toEqual([]);
  });

  it('ElevenLabs scribe (elevenlabs-transcription.json)', () => {
    expect(problems(W.ElevenLabsTranscription, fixtureJson(`${VERCEL}elevenlabs/src/__fixtures__/elevenlabs-transcription.json`))).toEqual([]);
  });

  it.each(vercel('openai/src/image', '.json'))('OpenAI images: %s', (file) => {
    expect(jsonProblems(file, W.OpenAIImages, W.OpenAIError)).toEqual([]);
  });
});

describe('the schemas hold the assumptions (a recorded answer with one read field changed fails)', () => {
  const edited = (file: string, edit: (body: Record<string, unknown>) => void) => {
    const body = fixtureJson(file) as Record<string, unknown>;
    edit(body);
    return body;
  };
  const first = (value: unknown, key: string) => (value as Record<string, unknown[]>)[key]![0] as Record<string, unknown>;

  it('an OpenAI finish_reason mapFinish does not know', () => {
    const body = edited(`${VERCEL}openai/src/chat/__fixtures__/openai-text.json`, (b) => void (first(b, 'choices').finish_reason = 'eos'));
    expect(problems(W.ChatCompletion, body)).toEqual(['choices.0.finish_reason: Invalid option: expected one of "stop"|"length"|"tool_calls"|"content_filter"|"function_call"']);
  });

  it('an Anthropic token count that is not a number', () => {
    const body = edited(`${VERCEL}anthropic/src/__fixtures__/anthropic-text.json`, (b) => void ((b.usage as Record<string, unknown>).input_tokens = '12'));
    expect(problems(W.AnthropicMessage, body)).toEqual(['usage.input_tokens: Invalid input: expected number, received string']);
  });

  it('a Gemini function call without a name, and a Responses text delta without its delta', () => {
    const body = edited(`${VERCEL}google/src/__fixtures__/google-tool-call.json`, (b) => {
      const part = ((first(b, 'candidates').content as Record<string, unknown>).parts as Record<string, Record<string, unknown>>[])[0]!;
      delete part.functionCall!.name;
    });
    expect(problems(W.GenerateContentResponse, body)).toEqual(['candidates.0.content.parts.0.functionCall.name: Invalid input: expected string, received undefined']);
    expect(problems(W.ResponsesStreamEvent, { type: 'response.output_text.delta', sequence_number: 3, item_id: 'msg_1' })).toEqual(['delta: Invalid input: expected string, received undefined']);
  });
});
