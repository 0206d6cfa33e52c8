// Test-only zod schemas of the upstream answers the gateway reads: the fields the decoders in
// server/providers/ read, with the types and values they assume. Loose objects throughout: they
// assert what is read, never the absence of anything else. wire-schemas.test.ts parses every real
// recorded answer with them, so a fixture or a provider change that breaks an assumption fails.
import { z } from 'zod';
import type * as AnthropicWire from '../../server/providers/anthropic/wire.ts';
import type * as ElevenLabsWire from '../../server/providers/elevenlabs/wire.ts';
import type * as GeminiWire from '../../server/providers/gemini/wire.ts';
import type * as OpenAIWire from '../../server/providers/openai/wire.ts';

const int = z.number().int().nonnegative();

/**
 * An object with a string `type` whose known types must also match their own schema (an unknown
 * type passes: decoders skip item, block and event types they do not handle).
 */
function byType(known: Record<string, z.ZodType>) {
  return z.looseObject({ type: z.string() }).check((ctx) => {
    const schema = known[ctx.value.type];
    if (!schema) return;
    const r = schema.safeParse(ctx.value);
    if (!r.success) for (const issue of r.error.issues) ctx.issues.push({ code: 'custom', message: issue.message, path: issue.path, input: ctx.value });
  });
}

// ---- OpenAI chat completions (and OpenAI-compatible servers) — providers/openai/chat.ts -----------

/** The finish reasons mapFinish knows; another value would be read as `stop`. */
export const ChatFinishReason = z.enum(['stop', 'length', 'tool_calls', 'content_filter', 'function_call']);

export const ChatUsage = z.looseObject({
  prompt_tokens: int,
  completion_tokens: int,
  total_tokens: int,
  prompt_tokens_details: z
    .looseObject({ cached_tokens: int.nullish(), cache_write_tokens: int.nullish(), audio_tokens: int.nullish(), image_tokens: int.nullish(), video_tokens: int.nullish() })
    .nullish(),
  completion_tokens_details: z
    .looseObject({
      reasoning_tokens: int.nullish(),
      audio_tokens: int.nullish(),
      image_tokens: int.nullish(),
      accepted_prediction_tokens: int.nullish(),
      rejected_prediction_tokens: int.nullish(),
    })
    .nullish(),
  server_tool_use_details: z.looseObject({ web_search_requests: int.nullish() }).nullish(),
});

const ChatToolCall = z.looseObject({
  id: z.string(),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

export const ChatCompletion = z.looseObject({
  id: z.string(),
  object: z.literal('chat.completion'),
  model: z.string(),
  choices: z
    .array(
      z.looseObject({
        index: int,
        message: z.looseObject({
          role: z.literal('assistant'),
          content: z.string().nullish(),
          refusal: z.string().nullish(),
          reasoning_content: z.string().nullish(),
          tool_calls: z.array(ChatToolCall).nullish(),
        }),
        finish_reason: ChatFinishReason,
      }),
    )
    .min(1),
  usage: ChatUsage.optional(),
});

export const ChatCompletionChunk = z.looseObject({
  id: z.string(),
  model: z.string(),
  choices: z.array(
    z.looseObject({
      index: int,
      delta: z.looseObject({
        role: z.literal('assistant').nullish(),
        content: z.string().nullish(),
        refusal: z.string().nullish(),
        reasoning_content: z.string().nullish(),
        tool_calls: z
          .array(
            z.looseObject({
              index: int,
              id: z.string().nullish(),
              function: z.looseObject({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
            }),
          )
          .nullish(),
      }),
      finish_reason: ChatFinishReason.nullish(),
    }),
  ),
  usage: ChatUsage.nullish(),
});

/** OpenAI's error envelope (an HTTP error body, or an `error` chunk in a stream). */
export const OpenAIError = z.looseObject({
  error: z.looseObject({ message: z.string(), type: z.string().nullish(), code: z.string().nullish(), param: z.string().nullish() }),
});

// ---- OpenAI Responses — providers/openai/responses.ts ---------------------------------------------

export const ResponsesUsage = z.looseObject({
  input_tokens: int,
  input_tokens_details: z.looseObject({ cached_tokens: int, cache_write_tokens: int.optional() }),
  output_tokens: int,
  output_tokens_details: z.looseObject({ reasoning_tokens: int }),
  total_tokens: int,
});

const ResponsesOutputItem = byType({
  message: z.looseObject({
    role: z.literal('assistant'),
    content: z.array(byType({ output_text: z.looseObject({ text: z.string() }), refusal: z.looseObject({ refusal: z.string() }) })),
  }),
  function_call: z.looseObject({ call_id: z.string(), name: z.string(), arguments: z.string() }),
  reasoning: z.looseObject({ summary: z.array(z.looseObject({ type: z.literal('summary_text'), text: z.string() })) }),
});

export const ResponseObject = z.looseObject({
  id: z.string(),
  object: z.literal('response'),
  model: z.string(),
  status: z.enum(['completed', 'incomplete', 'failed', 'in_progress', 'queued', 'cancelled']),
  incomplete_details: z.looseObject({ reason: z.enum(['max_output_tokens', 'content_filter']) }).nullish(),
  error: z.looseObject({ code: z.string(), message: z.string() }).nullish(),
  output: z.array(ResponsesOutputItem),
  usage: ResponsesUsage.nullish(),
});

/** The stream events ResponsesStreamDecoder reads; the others (done events, tool progress) it skips. */
export const ResponsesStreamEvent = z.looseObject({ type: z.string(), sequence_number: int }).and(
  byType({
    'response.created': z.looseObject({ response: ResponseObject }),
    'response.output_item.added': z.looseObject({ output_index: int, item: ResponsesOutputItem.and(byType({ function_call: z.looseObject({ call_id: z.string(), name: z.string() }) })) }),
    'response.function_call_arguments.delta': z.looseObject({ output_index: int, delta: z.string() }),
    'response.output_text.delta': z.looseObject({ delta: z.string() }),
    'response.reasoning_summary_text.delta': z.looseObject({ delta: z.string() }),
    'response.completed': z.looseObject({ response: ResponseObject.and(z.looseObject({ status: z.literal('completed'), usage: ResponsesUsage })) }),
    'response.incomplete': z.looseObject({ response: ResponseObject.and(z.looseObject({ status: z.literal('incomplete') })) }),
    'response.failed': z.looseObject({ response: ResponseObject.and(z.looseObject({ status: z.literal('failed'), error: z.looseObject({ code: z.string(), message: z.string() }) })) }),
    error: z.looseObject({ error: z.looseObject({ code: z.string().nullish(), message: z.string() }) }),
  }),
);

// ---- Anthropic Messages — providers/anthropic/messages.ts -----------------------------------------

/** The stop reasons mapStop knows; another value would be read as `stop`. */
export const AnthropicStopReason = z.enum(['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal', 'model_context_window_exceeded']);

const AnthropicCacheCreation = z.looseObject({ ephemeral_5m_input_tokens: int.nullish(), ephemeral_1h_input_tokens: int.nullish() });

/** One step of a request that ran several (compaction, advisor). */
const AnthropicUsageIteration = z.looseObject({
  type: z.string().optional(),
  model: z.string().optional(),
  input_tokens: int.nullish(),
  output_tokens: int.nullish(),
  cache_creation_input_tokens: int.nullish(),
  cache_read_input_tokens: int.nullish(),
  cache_creation: AnthropicCacheCreation.nullish(),
});

/** The usage's parts the decoder reads, beside the totals. */
const anthropicUsageParts = {
  cache_creation_input_tokens: int.nullish(),
  cache_read_input_tokens: int.nullish(),
  cache_creation: AnthropicCacheCreation.nullish(),
  output_tokens_details: z.looseObject({ thinking_tokens: int.nullish() }).nullish(),
  server_tool_use: z.looseObject({ web_search_requests: int.nullish(), web_fetch_requests: int.nullish() }).nullish(),
  iterations: z.array(AnthropicUsageIteration).nullish(),
};

export const AnthropicUsage = z.looseObject({ input_tokens: int, output_tokens: int, ...anthropicUsageParts });

const WebSearchCitation = z.looseObject({ url: z.string(), title: z.string().nullish() });

const AnthropicBlock = byType({
  text: z.looseObject({ text: z.string(), citations: z.array(byType({ web_search_result_location: WebSearchCitation })).nullish() }),
  thinking: z.looseObject({ thinking: z.string(), signature: z.string() }),
  redacted_thinking: z.looseObject({ data: z.string() }),
  tool_use: z.looseObject({ id: z.string(), name: z.string(), input: z.record(z.string(), z.unknown()) }),
  server_tool_use: z.looseObject({ id: z.string(), name: z.string() }),
});

export const AnthropicMessage = z.looseObject({
  id: z.string(),
  type: z.literal('message'),
  role: z.literal('assistant'),
  model: z.string(),
  content: z.array(AnthropicBlock),
  stop_reason: AnthropicStopReason,
  stop_sequence: z.string().nullish(),
  usage: AnthropicUsage,
});

export const AnthropicStreamEvent = byType({
  // Usually empty content and no stop reason; with programmatic tool calling a message can arrive
  // whole in message_start (content and stop_reason set, then message_stop).
  message_start: z.looseObject({
    message: z.looseObject({ id: z.string(), model: z.string(), content: z.array(AnthropicBlock), stop_reason: AnthropicStopReason.nullable(), usage: AnthropicUsage }),
  }),
  content_block_start: z.looseObject({ index: int, content_block: AnthropicBlock }),
  content_block_delta: z.looseObject({
    index: int,
    delta: byType({
      text_delta: z.looseObject({ text: z.string() }),
      input_json_delta: z.looseObject({ partial_json: z.string() }),
      thinking_delta: z.looseObject({ thinking: z.string() }),
      signature_delta: z.looseObject({ signature: z.string() }),
      citations_delta: z.looseObject({ citation: byType({ web_search_result_location: WebSearchCitation }) }),
    }),
  }),
  content_block_stop: z.looseObject({ index: int }),
  message_delta: z.looseObject({
    delta: z.looseObject({ stop_reason: AnthropicStopReason, stop_sequence: z.string().nullish() }),
    // Cumulative; input and cache counts may be absent (then message_start's hold).
    usage: z.looseObject({ output_tokens: int, input_tokens: int.nullish(), ...anthropicUsageParts }),
  }),
  message_stop: z.looseObject({}),
  ping: z.looseObject({}),
  error: z.looseObject({ error: z.looseObject({ type: z.string(), message: z.string() }) }),
});

// ---- Gemini generateContent / streamGenerateContent — providers/gemini/generate-content.ts ------

/** Gemini's documented finish reasons (mapFinish maps the policy ones to content_filter). */
export const GeminiFinishReason = z.enum([
  'FINISH_REASON_UNSPECIFIED',
  'STOP',
  'MAX_TOKENS',
  'SAFETY',
  'RECITATION',
  'LANGUAGE',
  'OTHER',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'MALFORMED_FUNCTION_CALL',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_OTHER',
  'NO_IMAGE',
  'IMAGE_RECITATION',
  'UNEXPECTED_TOOL_CALL',
  'TOO_MANY_TOOL_CALLS',
]);

const GeminiModalityCounts = z.array(z.looseObject({ modality: z.enum(['MODALITY_UNSPECIFIED', 'TEXT', 'IMAGE', 'VIDEO', 'AUDIO', 'DOCUMENT']), tokenCount: int.optional() }));

export const GeminiUsage = z.looseObject({
  promptTokenCount: int.optional(),
  candidatesTokenCount: int.optional(),
  thoughtsTokenCount: int.optional(),
  toolUsePromptTokenCount: int.optional(),
  cachedContentTokenCount: int.optional(),
  totalTokenCount: int.optional(),
  promptTokensDetails: GeminiModalityCounts.optional(),
  toolUsePromptTokensDetails: GeminiModalityCounts.optional(),
  cacheTokensDetails: GeminiModalityCounts.optional(),
  candidatesTokensDetails: GeminiModalityCounts.optional(),
});

const GeminiPart = z.looseObject({
  text: z.string().optional(),
  thought: z.boolean().optional(),
  thoughtSignature: z.string().optional(),
  functionCall: z.looseObject({ id: z.string().optional(), name: z.string(), args: z.record(z.string(), z.unknown()).optional() }).optional(),
  inlineData: z.looseObject({ mimeType: z.string(), data: z.string() }).optional(),
});

export const GenerateContentResponse = z.looseObject({
  candidates: z
    .array(
      z.looseObject({
        content: z.looseObject({ role: z.literal('model').optional(), parts: z.array(GeminiPart).optional() }).optional(),
        finishReason: GeminiFinishReason.optional(),
      }),
    )
    .optional(),
  promptFeedback: z.looseObject({ blockReason: z.string().optional() }).optional(),
  usageMetadata: GeminiUsage.optional(),
  modelVersion: z.string().optional(),
  responseId: z.string().optional(),
});

/** Google's error envelope (an HTTP error body, or an error chunk in a stream). */
export const GoogleError = z.looseObject({ error: z.looseObject({ code: int, message: z.string(), status: z.string() }) });

// ---- Embeddings — providers/openai/embeddings.ts, providers/gemini/embeddings.ts -----------------

export const OpenAIEmbeddings = z.looseObject({
  object: z.literal('list'),
  data: z.array(z.looseObject({ object: z.literal('embedding'), index: int, embedding: z.union([z.array(z.number()), z.string()]) })).min(1),
  model: z.string(),
  usage: z.looseObject({ prompt_tokens: int, total_tokens: int }),
});

/** `:batchEmbedContents` (no recording of one exists in the shared fixtures). */
export const GeminiBatchEmbeddings = z.looseObject({ embeddings: z.array(z.looseObject({ values: z.array(z.number()) })) });

// ---- Transcription and images — providers/{openai,elevenlabs}/transcription.ts, openai/images.ts --

export const OpenAITranscription = z.looseObject({
  text: z.string(),
  language: z.string().optional(),
  duration: z.number().optional(),
  words: z.array(z.looseObject({ word: z.string(), start: z.number(), end: z.number() })).optional(),
  segments: z.array(z.looseObject({ start: z.number(), end: z.number(), text: z.string() })).optional(),
  usage: z
    .union([
      z.looseObject({ type: z.literal('duration'), seconds: z.number() }),
      z.looseObject({ type: z.literal('tokens'), input_tokens: int, output_tokens: int.optional() }),
    ])
    .optional(),
});

export const ElevenLabsTranscription = z.looseObject({
  text: z.string(),
  language_code: z.string(),
  words: z.array(z.looseObject({ text: z.string(), type: z.enum(['word', 'spacing', 'audio_event']), start: z.number().nullish(), end: z.number().nullish() })),
});

export const OpenAIImages = z.looseObject({
  data: z.array(z.looseObject({ b64_json: z.string().min(1), revised_prompt: z.string().optional() })).min(1),
  output_format: z.enum(['png', 'jpeg', 'webp']).optional(),
  usage: z.looseObject({ input_tokens: int, output_tokens: int }).optional(),
});

// ---- The wire types agree: every answer these schemas accept is one of server/providers/*/wire.ts's
// (checked by tsc; the schemas of byType objects name the type as a string, so they are left out).

type Accepts<Wire, Schema extends z.ZodType> = z.infer<Schema> extends Wire ? true : never;

export const wireTypesAgree: [
  Accepts<OpenAIWire.ChatCompletion, typeof ChatCompletion>,
  Accepts<OpenAIWire.ChatCompletionChunk, typeof ChatCompletionChunk>,
  Accepts<OpenAIWire.ChatUsage, typeof ChatUsage>,
  Accepts<OpenAIWire.ResponsesUsage, typeof ResponsesUsage>,
  Accepts<OpenAIWire.Embeddings, typeof OpenAIEmbeddings>,
  Accepts<OpenAIWire.Transcription, typeof OpenAITranscription>,
  Accepts<OpenAIWire.Images, typeof OpenAIImages>,
  Accepts<AnthropicWire.Usage, typeof AnthropicUsage>,
  Accepts<GeminiWire.UsageMetadata, typeof GeminiUsage>,
  Accepts<GeminiWire.GenerateContentResponse, typeof GenerateContentResponse>,
  Accepts<GeminiWire.BatchEmbeddings, typeof GeminiBatchEmbeddings>,
  Accepts<ElevenLabsWire.Transcription, typeof ElevenLabsTranscription>,
] = [true, true, true, true, true, true, true, true, true, true, true, true];
