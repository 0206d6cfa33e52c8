import { z } from 'zod';
import { JsonSchemaObject, modelId } from './common.ts';

const CacheControl = z.looseObject({ type: z.literal('ephemeral'), ttl: z.string().optional() }).nullable().optional();

/** Filled below from the described blocks; read at parse time. */
const knownBlockTypes = new Set<string>();
/**
 * Block types this contract does not describe (Anthropic adds them often: `search_result`,
 * `tool_reference`, `container_upload`, …) are accepted and passed through to Anthropic models;
 * translating them for another provider is a 400.
 */
const OtherBlock = z
  .looseObject({ type: z.string().refine((t) => !knownBlockTypes.has(t), { message: 'a block of this type has a required field missing or wrong' }) })
  .describe('Any other Anthropic content block: passed through to Anthropic models only.');

const TextBlock = z.looseObject({ type: z.literal('text'), text: z.string(), cache_control: CacheControl });
const ImageBlock = z.looseObject({
  type: z.literal('image'),
  source: z.discriminatedUnion('type', [
    z.looseObject({
      type: z.literal('base64'),
      media_type: z.enum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']),
      data: z.string(),
    }),
    z.looseObject({ type: z.literal('url'), url: z.string().url() }),
    z.looseObject({ type: z.literal('file'), file_id: z.string() }),
  ]),
  cache_control: CacheControl,
});
const DocumentBlock = z.looseObject({ type: z.literal('document'), source: z.looseObject({ type: z.string() }) });
const ToolUseBlock = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string(),
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
});
const ToolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  content: z.union([z.string(), z.array(z.union([z.discriminatedUnion('type', [TextBlock, ImageBlock, DocumentBlock]), OtherBlock]))]).optional(),
  is_error: z.boolean().optional(),
  cache_control: CacheControl,
});
const ThinkingBlock = z.looseObject({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() });
const RedactedThinkingBlock = z.looseObject({ type: z.literal('redacted_thinking'), data: z.string() });
const ServerToolUseBlock = z.looseObject({
  type: z.literal('server_tool_use'),
  id: z.string(),
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
});
const WebSearchResultBlock = z.looseObject({ type: z.literal('web_search_tool_result'), tool_use_id: z.string(), content: z.unknown() });

const knownBlocks = [
  TextBlock,
  ImageBlock,
  DocumentBlock,
  ToolUseBlock,
  ToolResultBlock,
  ThinkingBlock,
  RedactedThinkingBlock,
  ServerToolUseBlock,
  WebSearchResultBlock,
] as const;
for (const b of knownBlocks) knownBlockTypes.add(b.shape.type.value);

export const MessagesContentBlock = z.union([z.discriminatedUnion('type', [...knownBlocks]), OtherBlock]).meta({ id: 'MessagesContentBlock' });

const messageContent = z.union([z.string(), z.array(MessagesContentBlock)]);

export const MessagesMessage = z
  .discriminatedUnion('role', [
    z.looseObject({ role: z.literal('user'), content: messageContent }),
    z.looseObject({ role: z.literal('assistant'), content: messageContent }),
    z
      .looseObject({
        role: z.literal('system'),
        content: z.union([z.string(), z.array(z.union([TextBlock, OtherBlock]))]).optional(),
        clear_at: z.enum(['next_user_message', 'never']).nullable().optional(),
        output_config: z.looseObject({}).nullable().optional(),
      })
      .describe(
        'A system message inside the conversation (Anthropic’s mid-conversation system messages): passed through to Anthropic models; ' +
          'for other providers a system message at its position (Gemini: leading ones join the system instruction, later ones become marked user text).',
      ),
  ])
  .meta({ id: 'MessagesMessage' });

export const MessagesTool = z
  .union([
    z.looseObject({
      type: z.literal('custom').optional(),
      name: z.string().regex(/^[a-zA-Z0-9_-]{1,128}$/, { message: 'must be 1-128 letters, digits, _ or -' }),
      description: z.string().optional(),
      input_schema: JsonSchemaObject,
      cache_control: CacheControl,
    }),
    z
      .looseObject({ type: z.string().regex(/^(?!custom$)[a-z_]+_\d{8}$/), name: z.string() })
      .describe('A server tool such as `web_search_20250305`.'),
  ])
  .meta({ id: 'MessagesTool' });

export const MessagesEffort = z.enum(['low', 'medium', 'high', 'xhigh', 'max']).meta({ id: 'MessagesEffort' });

export const MessagesToolChoice = z
  .discriminatedUnion('type', [
    z.looseObject({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().optional() }),
    z.looseObject({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().optional() }),
    z.looseObject({ type: z.literal('none') }),
    z.looseObject({ type: z.literal('tool'), name: z.string(), disable_parallel_tool_use: z.boolean().optional() }),
  ])
  .meta({ id: 'MessagesToolChoice' });

export const MessagesRequest = z
  .looseObject({
    model: modelId,
    messages: z.array(MessagesMessage).min(1),
    max_tokens: z.number().int().min(1),
    system: z.union([z.string(), z.array(TextBlock)]).optional(),
    stream: z.boolean().optional(),
    temperature: z.number().min(0).max(1).optional(),
    top_p: z.number().min(0).max(1).optional(),
    top_k: z.number().int().min(0).optional(),
    stop_sequences: z.array(z.string()).optional(),
    tools: z.array(MessagesTool).optional(),
    tool_choice: MessagesToolChoice.optional(),
    thinking: z
      .discriminatedUnion('type', [
        z.looseObject({ type: z.literal('enabled'), budget_tokens: z.number().int().min(1024) }),
        z.looseObject({ type: z.literal('disabled') }),
        z.looseObject({ type: z.literal('adaptive'), display: z.enum(['summarized', 'omitted']).nullable().optional() }),
        z.looseObject({ type: z.literal('between_tools') }),
      ])
      .optional(),
    output_config: z
      .looseObject({
        effort: MessagesEffort.nullable().optional(),
        format: z.looseObject({ type: z.literal('json_schema'), schema: JsonSchemaObject }).nullable().optional(),
      })
      .optional()
      .describe(
        '`effort` maps to the other providers’ reasoning controls (reasoning_effort, thinking budgets) when the model reasons; ' +
          '`format` to their structured output (validated before it is returned).',
      ),
    output_format: z
      .looseObject({ type: z.literal('json_schema'), schema: JsonSchemaObject })
      .nullable()
      .optional()
      .describe('The older spelling of `output_config.format` (beta `structured-outputs-2025-11-13`): translated the same way for every model.'),
    context_management: z
      .looseObject({ edits: z.array(z.looseObject({ type: z.string() })).optional() })
      .optional()
      .describe('Applied by Anthropic models; dropped for the others and named in `X-Gateway-Warnings`.'),
    metadata: z.looseObject({ user_id: z.string().nullable().optional() }).optional(),
  })
  .meta({
    id: 'MessagesRequest',
    description:
      'Messages-format request. Unknown fields are passed on to Anthropic models; for the others, fields that cannot be translated are dropped ' +
      'and named in the `X-Gateway-Warnings` response header. Image blocks pass through unchanged.',
  });
export type MessagesRequest = z.infer<typeof MessagesRequest>;

export const MessagesCountTokensRequest = MessagesRequest.omit({ max_tokens: true, stream: true }).meta({
  id: 'MessagesCountTokensRequest',
  description: 'A Messages request without `max_tokens` (and `stream`): the input tokens it would use are counted, nothing is generated.',
});
export type MessagesCountTokensRequest = z.infer<typeof MessagesCountTokensRequest>;
/** What the Messages decoder reads: a generation's request, or a count's (no `max_tokens`). */
export type MessagesInput = MessagesCountTokensRequest & Partial<Pick<MessagesRequest, 'max_tokens' | 'stream'>>;

export const MessagesTokenCount = z
  .looseObject({ input_tokens: z.number().int().nonnegative().describe('The input tokens of the request: messages, system prompt and tools.') })
  .meta({ id: 'MessagesTokenCount' });

export const MessagesStopReason = z
  .enum(['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal', 'model_context_window_exceeded'])
  .meta({ id: 'MessagesStopReason' });

export const MessagesUsage = z
  .looseObject({
    input_tokens: z.number().int().describe('Input tokens neither read from nor written to the cache.'),
    output_tokens: z.number().int().describe('All output tokens, thinking included.'),
    cache_creation_input_tokens: z.number().int().nullable().optional(),
    cache_read_input_tokens: z.number().int().nullable().optional(),
    cache_creation: z
      .looseObject({ ephemeral_5m_input_tokens: z.number().int(), ephemeral_1h_input_tokens: z.number().int() })
      .nullable()
      .optional()
      .describe('The cache writes by lifetime (when there were any).'),
    output_tokens_details: z.looseObject({ thinking_tokens: z.number().int() }).nullable().optional().describe('Of the output, the thinking (when there was any).'),
    server_tool_use: z.looseObject({ web_search_requests: z.number().int() }).nullable().optional().describe('Web searches the provider ran (when there were any).'),
  })
  .meta({ id: 'MessagesUsage', description: '`input_tokens` excludes cache reads and writes: the prompt is their sum.' });

export const MessagesResponse = z
  .looseObject({
    id: z.string(),
    type: z.literal('message'),
    role: z.literal('assistant'),
    model: z.string(),
    content: z.array(MessagesContentBlock),
    stop_reason: MessagesStopReason.nullable(),
    stop_sequence: z.string().nullable(),
    usage: MessagesUsage,
  })
  .meta({ id: 'MessagesResponse' });

const blockIndex = z.number().int();
export const MessagesStreamEvent = z
  .discriminatedUnion('type', [
    z.looseObject({ type: z.literal('message_start'), message: MessagesResponse }),
    z.looseObject({ type: z.literal('content_block_start'), index: blockIndex, content_block: MessagesContentBlock }),
    z.looseObject({
      type: z.literal('content_block_delta'),
      index: blockIndex,
      delta: z.discriminatedUnion('type', [
        z.looseObject({ type: z.literal('text_delta'), text: z.string() }),
        z.looseObject({ type: z.literal('input_json_delta'), partial_json: z.string() }),
        z.looseObject({ type: z.literal('thinking_delta'), thinking: z.string() }),
        z.looseObject({ type: z.literal('signature_delta'), signature: z.string() }),
        z.looseObject({ type: z.literal('citations_delta'), citation: z.unknown() }),
      ]),
    }),
    z.looseObject({ type: z.literal('content_block_stop'), index: blockIndex }),
    z.looseObject({
      type: z.literal('message_delta'),
      delta: z.looseObject({ stop_reason: MessagesStopReason.nullable(), stop_sequence: z.string().nullable().optional() }),
      usage: z.looseObject({ output_tokens: z.number().int(), input_tokens: z.number().int().nullable().optional() }),
    }),
    z.looseObject({ type: z.literal('message_stop') }),
    z.looseObject({ type: z.literal('ping') }),
    z.looseObject({
      type: z.literal('error'),
      error: z.looseObject({ type: z.string(), message: z.string(), code: z.string().optional() }),
    }),
  ])
  .meta({
    id: 'MessagesStreamEvent',
    description:
      'Messages stream: `event: <type>` + `data: <json>` in the order message_start, (content_block_start, content_block_delta*, content_block_stop)*, message_delta, message_stop; `ping` may appear anywhere; a mid-stream failure sends one `error` event and closes.',
  });
