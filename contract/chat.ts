import { z } from 'zod';
import { ChatUsage, JsonSchemaObject, httpsOrDataUrl, modelId, unixSeconds } from './common.ts';

const TextPart = z.looseObject({ type: z.literal('text'), text: z.string() });
const ImageUrlPart = z.looseObject({
  type: z.literal('image_url'),
  image_url: z.looseObject({
    url: httpsOrDataUrl.describe('HTTPS URL or base64 data URI'),
    detail: z.enum(['auto', 'low', 'high']).optional(),
  }),
});
const InputAudioPart = z.looseObject({
  type: z.literal('input_audio'),
  input_audio: z.looseObject({ data: z.string(), format: z.string() }),
});
const FilePart = z.looseObject({ type: z.literal('file'), file: z.looseObject({}) });
const RefusalPart = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });

export const ChatContentPart = z
  .discriminatedUnion('type', [TextPart, ImageUrlPart, InputAudioPart, FilePart])
  .meta({ id: 'ChatContentPart' });

const textContent = z.union([z.string(), z.array(TextPart)]);

export const ChatToolCall = z
  .looseObject({
    id: z.string(),
    type: z.literal('function'),
    function: z.looseObject({ name: z.string(), arguments: z.string().describe('JSON-encoded arguments') }),
  })
  .meta({ id: 'ChatToolCall' });

export const ChatMessage = z
  .discriminatedUnion('role', [
    z.looseObject({ role: z.literal('system'), content: textContent, name: z.string().optional() }),
    z.looseObject({ role: z.literal('developer'), content: textContent, name: z.string().optional() }),
    z.looseObject({
      role: z.literal('user'),
      content: z.union([z.string(), z.array(ChatContentPart).min(1)]),
      name: z.string().optional(),
    }),
    z.looseObject({
      role: z.literal('assistant'),
      content: z.union([z.string(), z.array(z.discriminatedUnion('type', [TextPart, RefusalPart]))]).nullable().optional(),
      tool_calls: z.array(ChatToolCall).optional(),
      refusal: z.string().nullable().optional(),
      reasoning_content: z
        .string()
        .nullable()
        .optional()
        .describe('Reasoning text returned by the gateway for a previous turn; sent back to keep multi-turn reasoning.'),
      name: z.string().optional(),
    }),
    z.looseObject({ role: z.literal('tool'), tool_call_id: z.string(), content: textContent }),
  ])
  .meta({ id: 'ChatMessage' });

export const ChatTool = z
  .looseObject({
    type: z.literal('function'),
    function: z.looseObject({
      name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, { message: 'must be 1-64 letters, digits, _ or -' }),
      description: z.string().optional(),
      parameters: JsonSchemaObject.optional(),
      strict: z.boolean().nullable().optional(),
    }),
  })
  .meta({ id: 'ChatTool' });

export const ChatToolChoice = z
  .union([
    z.enum(['auto', 'none', 'required']),
    z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string() }) }),
  ])
  .meta({ id: 'ChatToolChoice' });

export const ReasoningEffort = z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']).meta({ id: 'ReasoningEffort' });

export const ChatResponseFormat = z
  .discriminatedUnion('type', [
    z.looseObject({ type: z.literal('text') }),
    z.looseObject({ type: z.literal('json_object') }),
    z.looseObject({
      type: z.literal('json_schema'),
      json_schema: z.looseObject({
        name: z.string(),
        description: z.string().optional(),
        schema: JsonSchemaObject.optional(),
        strict: z.boolean().nullable().optional(),
      }),
    }),
  ])
  .meta({ id: 'ChatResponseFormat' });

/** Fields the gateway removes before forwarding (docs/translation.md lists them). */
export const chatStrippedFields = [
  'n',
  'service_tier',
  'metadata',
  'store',
  'safety_identifier',
  'user',
  'deferred',
  'plugins',
  'provider',
] as const;

export const ChatCompletionRequest = z
  .looseObject({
    model: modelId,
    messages: z.array(ChatMessage).min(1),
    max_tokens: z.number().int().min(1).optional(),
    max_completion_tokens: z.number().int().min(1).optional(),
    temperature: z.number().min(0).max(2).optional(),
    top_p: z.number().min(0).max(1).optional(),
    top_k: z.number().int().min(0).optional().describe('Passed to providers that support it.'),
    stream: z.boolean().optional(),
    stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional(),
    stop: z.union([z.string(), z.array(z.string()).max(4)]).nullable().optional(),
    seed: z.number().int().optional(),
    frequency_penalty: z.number().min(-2).max(2).optional(),
    presence_penalty: z.number().min(-2).max(2).optional(),
    reasoning_effort: ReasoningEffort.optional(),
    response_format: ChatResponseFormat.optional(),
    tools: z.array(ChatTool).optional(),
    tool_choice: ChatToolChoice.optional(),
    parallel_tool_calls: z.boolean().optional(),
  })
  .meta({
    id: 'ChatCompletionRequest',
    description:
      'Chat-completions request. Unknown fields are passed on to the upstream. Silently stripped before forwarding: ' +
      chatStrippedFields.join(', ') +
      '. The gateway always asks the upstream for usage (`stream_options.include_usage`); the client sees the usage chunk only when it asked.',
  });
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequest>;

export const FinishReason = z.enum(['stop', 'length', 'tool_calls', 'content_filter', 'function_call']).meta({ id: 'FinishReason' });

export const ChatCompletion = z
  .looseObject({
    id: z.string(),
    object: z.literal('chat.completion'),
    created: unixSeconds,
    model: z.string(),
    choices: z.array(
      z.looseObject({
        index: z.number().int(),
        message: z.looseObject({
          role: z.literal('assistant'),
          content: z.string().nullable(),
          refusal: z.string().nullable().optional(),
          tool_calls: z.array(ChatToolCall).optional(),
          reasoning_content: z.string().nullable().optional(),
        }),
        finish_reason: FinishReason.nullable(),
        logprobs: z.unknown().nullable().optional(),
      }),
    ),
    usage: ChatUsage.optional(),
    system_fingerprint: z.string().nullable().optional(),
  })
  .meta({ id: 'ChatCompletion' });

export const ChatCompletionChunk = z
  .looseObject({
    id: z.string(),
    object: z.literal('chat.completion.chunk'),
    created: unixSeconds,
    model: z.string(),
    choices: z.array(
      z.looseObject({
        index: z.number().int(),
        delta: z.looseObject({
          role: z.literal('assistant').optional(),
          content: z.string().nullable().optional(),
          reasoning_content: z.string().nullable().optional(),
          refusal: z.string().nullable().optional(),
          tool_calls: z
            .array(
              z.looseObject({
                index: z.number().int(),
                id: z.string().optional(),
                type: z.literal('function').optional(),
                function: z.looseObject({ name: z.string().optional(), arguments: z.string().optional() }).optional(),
              }),
            )
            .optional(),
        }),
        finish_reason: FinishReason.nullable(),
      }),
    ),
    usage: ChatUsage.nullable().optional(),
  })
  .meta({
    id: 'ChatCompletionChunk',
    description:
      'One `data:` event of a chat stream. With `stream_options.include_usage` the last chunk before `data: [DONE]` has `choices: []` and the usage object.',
  });
