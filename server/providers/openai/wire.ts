// OpenAI's wire, as the gateway reads and writes it: the fields the decoders read (optional where
// OpenAI or an OpenAI-compatible server may leave them out) and the request bodies the encoders
// build. Types only; test/mappings/wire-schemas.ts holds the same shapes as zod schemas, checked
// against the recorded answers in test/fixtures/recorded/upstreams/.
import type { z } from 'zod';
import type { EmbeddingsResponse, ModerationResponse } from '../../../contract/embeddings.ts';

type Maybe<T> = T | null | undefined;

// ---- chat completions (providers/openai/chat.ts) ------------------------------------------------

/**
 * Every detail is a part of its total (`prompt_tokens` includes cached, written, audio and image
 * tokens; `completion_tokens` includes reasoning, audio and predicted tokens). OpenRouter adds
 * `video_tokens`, output `image_tokens` and `server_tool_use_details`, and sends null for details it lacks.
 */
export type ChatUsage = {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: Maybe<{
    cached_tokens?: Maybe<number>;
    cache_write_tokens?: Maybe<number>;
    audio_tokens?: Maybe<number>;
    image_tokens?: Maybe<number>;
    video_tokens?: Maybe<number>;
  }>;
  completion_tokens_details?: Maybe<{
    reasoning_tokens?: Maybe<number>;
    audio_tokens?: Maybe<number>;
    image_tokens?: Maybe<number>;
    accepted_prediction_tokens?: Maybe<number>;
    rejected_prediction_tokens?: Maybe<number>;
  }>;
  /** OpenRouter: its server tools' calls (web search among them). */
  server_tool_use_details?: Maybe<{ web_search_requests?: Maybe<number> }>;
};

/** A message or a stream delta: OpenAI-compatible servers add their reasoning text. */
export type ChatMessageFields = {
  content?: Maybe<string>;
  refusal?: Maybe<string>;
  /** DeepSeek and vLLM. */
  reasoning_content?: Maybe<string>;
  /** OpenRouter (a string; some servers send an object, which is ignored). */
  reasoning?: unknown;
};

export type ChatToolCall = { id: string; type?: 'function'; function?: { name?: string; arguments?: string } };

export type ChatMessage = ChatMessageFields & { role?: 'assistant'; tool_calls?: Maybe<ChatToolCall[]> };

export type ChatCompletion = {
  id?: string;
  object?: 'chat.completion';
  model?: string;
  choices?: { index?: number; message?: ChatMessage; finish_reason?: Maybe<string> }[];
  usage?: Maybe<ChatUsage>;
};

export type ChatToolCallDelta = { index?: number; id?: Maybe<string>; function?: Maybe<{ name?: Maybe<string>; arguments?: Maybe<string> }> };

export type ChatDelta = ChatMessageFields & { role?: Maybe<'assistant'>; tool_calls?: Maybe<ChatToolCallDelta[]> };

export type ChatCompletionChunk = {
  id?: string;
  model?: string;
  choices?: { index?: number; delta?: ChatDelta; finish_reason?: Maybe<string> }[];
  usage?: Maybe<ChatUsage>;
  /** An error chunk in the stream. */
  error?: { message?: string; type?: string; code?: Maybe<string> };
};

export type ChatContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string; detail?: string } };

export type ChatRequestMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ChatContentPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[] }
  | { role: 'tool'; tool_call_id: string; content: string };

/** The body encodeChatBody builds (OpenAI-compatible servers take max_tokens and top_k). */
export type ChatRequest = {
  model: string;
  messages: ChatRequestMessage[];
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  seed?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  stop?: string[];
  tools?: { type: 'function'; function: { name: string; description?: string; parameters?: unknown } }[];
  parallel_tool_calls?: boolean;
  tool_choice?: string | { type: 'function'; function: { name: string } };
  reasoning_effort?: string;
  response_format?: { type: string; json_schema?: { name: string; schema: unknown; strict?: boolean; description?: string } };
  stream?: true;
  stream_options?: { include_usage: true };
};

// ---- Responses (providers/openai/responses.ts) --------------------------------------------------

export type ResponsesUsage = {
  input_tokens?: number;
  input_tokens_details?: Maybe<{ cached_tokens?: number; cache_write_tokens?: number }>;
  output_tokens?: number;
  output_tokens_details?: Maybe<{ reasoning_tokens?: number }>;
  total_tokens?: number;
};

/** The output items the decoder reads, by `type` (it skips the others). */
export type ResponsesOutputItem =
  | { type: 'message'; role?: 'assistant'; content?: ({ type: 'output_text'; text: string } | { type: 'refusal'; refusal: string })[] }
  | { type: 'function_call'; call_id: string; name: string; arguments: string }
  | { type: 'reasoning'; summary?: { type?: 'summary_text'; text: string }[] }
  | { type: 'web_search_call' };

export type ResponseObject = {
  id?: string;
  object?: 'response';
  model?: string;
  status?: string;
  incomplete_details?: Maybe<{ reason?: string }>;
  error?: Maybe<{ code?: string; message?: string }>;
  output?: ResponsesOutputItem[];
  usage?: Maybe<ResponsesUsage>;
};

/** The stream events ResponsesStreamDecoder reads, by `type` (it skips the others). */
export type ResponsesStreamEvent = { sequence_number?: number } & (
  | { type: 'response.created' | 'response.completed' | 'response.incomplete' | 'response.failed'; response?: ResponseObject }
  | { type: 'response.output_item.added'; output_index: number; item?: ResponsesOutputItem }
  | { type: 'response.function_call_arguments.delta'; output_index: number; delta: string }
  | { type: 'response.output_text.delta' | 'response.reasoning_summary_text.delta'; delta: string }
  /** Its message and code at the top level, or in `error`. */
  | { type: 'error'; message?: string; code?: string; error?: { message?: string; code?: Maybe<string> } }
);

// ---- embeddings, moderation, transcription, images ----------------------------------------------

/** `/embeddings` and `/moderations` answer in the gateway's own API shape, passed on as they are. */
export type Embeddings = z.infer<typeof EmbeddingsResponse>;
export type Moderation = z.infer<typeof ModerationResponse>;

/** `input_token_details` splits the input (gpt-4o-transcribe: the audio, and the prompt's text), each priced apart. */
export type TranscriptionUsage =
  | { type: 'duration'; seconds?: number }
  | { type: 'tokens'; input_tokens?: number; input_token_details?: { text_tokens?: number; audio_tokens?: number }; output_tokens?: number };

/** `/audio/transcriptions` as json (text, usage) or verbose_json (also language, duration, words, segments). */
export type Transcription = {
  text?: string;
  language?: string;
  duration?: number;
  words?: { word: string; start: number; end: number }[];
  segments?: { start: number; end: number; text: string }[];
  usage?: TranscriptionUsage;
};

/** GPT image models' usage: the input's tokens split by kind, and the output's where `output_tokens_details` is sent (else all image tokens). */
export type ImagesUsage = {
  input_tokens?: number;
  output_tokens?: number;
  input_tokens_details?: { text_tokens?: number; image_tokens?: number };
  output_tokens_details?: { text_tokens?: number; image_tokens?: number };
  [detail: string]: unknown;
};

/** `/images/generations` and `/images/edits` with b64_json. */
export type Images = {
  data?: { b64_json?: string; revised_prompt?: string }[];
  output_format?: string;
  usage?: ImagesUsage;
};

// ---- Input-token counts (providers/openai/input-tokens.ts) ----------------------------------------

export type InputContent = { type: 'input_text'; text: string } | { type: 'input_image'; image_url: string; detail: string };

export type InputItem =
  | { role: 'user' | 'system' | 'developer'; content: string | InputContent[] }
  | { role: 'assistant'; content: string }
  | { type: 'function_call'; call_id: string; name: string; arguments: string }
  | { type: 'function_call_output'; call_id: string; output: string };

/** The body of `POST /responses/input_tokens`: a Responses request's input side. */
export type InputTokensRequest = {
  model: string;
  input: InputItem[];
  instructions?: string;
  tools?: { type: 'function'; name: string; description?: string; parameters: unknown; strict: false }[];
  tool_choice?: string | { type: 'function'; name: string };
  text?: { format: { type: 'json_schema'; name: string; schema: unknown; strict?: boolean } | { type: 'json_object' } };
};

/** Its answer. */
export type InputTokens = { object?: 'response.input_tokens'; input_tokens?: number };
