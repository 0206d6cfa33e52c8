// What the fake upstreams (fake-upstreams.ts) answer a plain-text request with: the recorded
// answers they replay from test/fixtures/recorded, as the text and token counts a client sees, so
// tests can assert them exactly. Counts as the gateway reports them: input includes cached
// tokens, output includes reasoning (Gemini's thoughtsTokenCount is added to candidatesTokenCount).
import { readFileSync } from 'node:fs';

const recorded = (p: string) => readFileSync(new URL(`../fixtures/recorded/vercel-ai/${p}`, import.meta.url), 'utf8');

type Chunk = { choices?: { delta?: { content?: string | null } }[] };
type Completion = { choices: { message: { content: string } }[] };

/** OpenAI's recorded gpt-4.1-nano answer (openai-text.json) and stream (openai-text.chunks.txt): long texts, read from the files. */
const openaiText = (JSON.parse(recorded('openai/src/chat/__fixtures__/openai-text.json')) as Completion).choices[0]!.message.content;
const openaiStreamText = recorded('openai/src/chat/__fixtures__/openai-text.chunks.txt')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => (JSON.parse(l) as Chunk).choices?.[0]?.delta?.content ?? '')
  .join('');

export type Replayed = { text: string; input: number; output: number };

export type ReplayingUpstream = 'openai' | 'compat' | 'anthropic' | 'gemini';

/** The recorded answer a chat-completions, Messages or Gemini upstream replays (openai and compat share the OpenAI recording). */
export function replayed(upstream: ReplayingUpstream, stream: boolean): Replayed {
  switch (upstream) {
    case 'openai':
    case 'compat':
      return stream ? { text: openaiStreamText, input: 16, output: 300 } : { text: openaiText, input: 16, output: 363 };
    case 'anthropic':
      return stream
        ? { text: "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?", input: 12, output: 30 }
        : { text: "Hello! I'm doing well, thanks for asking. How are you doing today? Is there anything I can help you with?", input: 12, output: 29 };
    case 'gemini':
      // 28 + 244 thought tokens; streamed: 23 + 185.
      return stream
        ? { text: 'There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y', input: 9, output: 208 }
        : { text: "There are **3** r's in strawberry.\n\nHere is the breakdown: st**r**awbe**rr**y.", input: 9, output: 272 };
  }
}

/** The fake Responses upstream's scripted plain answer (OpenAI models are passed through to it). */
export const RESPONSES_ANSWER: Replayed = { text: 'Hello from the Responses API.', input: 14, output: 9 };

/** What a Responses request answers with: OpenAI's own Responses upstream, the others their recording. */
export const replayedForResponses = (upstream: ReplayingUpstream, stream: boolean): Replayed => (upstream === 'openai' ? RESPONSES_ANSWER : replayed(upstream, stream));
