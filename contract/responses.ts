import { z } from 'zod';
import { JsonSchemaObject, httpsOrDataUrl, modelId, unixSeconds } from './common.ts';
import { ErrorObject } from './errors.ts';

const InputText = z.looseObject({ type: z.literal('input_text'), text: z.string() });
const InputImage = z.looseObject({
  type: z.literal('input_image'),
  image_url: httpsOrDataUrl.optional(),
  file_id: z.string().optional(),
  detail: z.enum(['auto', 'low', 'high']).optional(),
});
const InputFile = z.looseObject({ type: z.literal('input_file') });
const OutputText = z.looseObject({ type: z.literal('output_text'), text: z.string(), annotations: z.array(z.unknown()).optional() });
const Refusal = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });

const MessageItem = z.looseObject({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: z.union([z.string(), z.array(z.discriminatedUnion('type', [InputText, InputImage, InputFile, OutputText, Refusal]))]),
});
const FunctionCallItem = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string(),
  name: z.string(),
  arguments: z.string(),
  id: z.string().optional(),
});
const FunctionCallOutputItem = z.looseObject({
  type: z.literal('function_call_output'),
  call_id: z.string(),
  output: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]),
});
const ReasoningItem = z.looseObject({
  type: z.literal('reasoning'),
  id: z.string().optional(),
  summary: z.array(z.looseObject({ type: z.string(), text: z.string() })).optional(),
  encrypted_content: z.string().nullable().optional(),
});
const OtherItem = z
  .looseObject({ type: z.string().regex(/^(?!message$|function_call$|function_call_output$|reasoning$)/) })
  .describe('Any other item type (built-in tool calls and outputs, item references) is passed on.');

export const ResponsesInputItem = z
  .union([MessageItem, FunctionCallItem, FunctionCallOutputItem, ReasoningItem, OtherItem])
  .meta({ id: 'ResponsesInputItem' });

export const builtInTools = [
  'web_search',
  'web_search_preview',
  'image_generation',
  'code_interpreter',
  'file_search',
  'computer_use_preview',
  'mcp',
] as const;

export const ResponsesTool = z
  .union([
    z.looseObject({
      type: z.literal('function'),
      name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, { message: 'must be 1-64 letters, digits, _ or -' }),
      description: z.string().nullable().optional(),
      parameters: JsonSchemaObject.nullable().optional(),
      strict: z.boolean().nullable().optional(),
    }),
    z.looseObject({ type: z.string().regex(/^(?!function$)[a-z_0-9]+$/) }).describe(
      `A built-in tool: ${builtInTools.join(', ')} (and dated variants). Built-in tools a model's provider cannot run are stripped ` +
        'and named in the `X-Gateway-Stripped-Tools` response header; web_search is always available.',
    ),
  ])
  .meta({ id: 'ResponsesTool' });

const ResponsesReasoningEffort = z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']);

export const ResponsesTextFormat = z
  .discriminatedUnion('type', [
    z.looseObject({ type: z.literal('text') }),
    z.looseObject({ type: z.literal('json_object') }),
    z.looseObject({
      type: z.literal('json_schema'),
      name: z.string(),
      schema: JsonSchemaObject,
      description: z.string().optional(),
      strict: z.boolean().nullable().optional(),
    }),
  ])
  .meta({ id: 'ResponsesTextFormat' });

export const responsesStrippedFields = [
  'n',
  'service_tier',
  'background',
  'user',
  'safety_identifier',
  'metadata',
  'context_management',
  'plugins',
  'provider',
] as const;

export const ResponsesRequest = z
  .looseObject({
    model: modelId,
    input: z.union([z.string(), z.array(ResponsesInputItem)]),
    stream: z.boolean().optional(),
    instructions: z.string().nullable().optional(),
    tools: z.array(ResponsesTool).optional(),
    tool_choice: z
      .union([
        z.enum(['auto', 'none', 'required']),
        z.looseObject({ type: z.literal('function'), name: z.string() }),
        z.looseObject({ type: z.string() }),
      ])
      .optional(),
    temperature: z.number().min(0).max(2).optional(),
    top_p: z.number().min(0).max(1).optional(),
    max_output_tokens: z.number().int().min(1).optional(),
    reasoning: z
      .looseObject({
        effort: ResponsesReasoningEffort.nullable().optional(),
        summary: z.enum(['auto', 'concise', 'detailed']).nullable().optional(),
      })
      .nullable()
      .optional(),
    text: z
      .looseObject({ format: ResponsesTextFormat.optional(), verbosity: z.enum(['low', 'medium', 'high']).optional() })
      .optional(),
    parallel_tool_calls: z.boolean().optional(),
    previous_response_id: z.string().optional(),
    include: z.array(z.string()).optional(),
  })
  .meta({
    id: 'ResponsesRequest',
    description: 'Responses-format request. Unknown fields are passed on. Silently stripped: ' + responsesStrippedFields.join(', ') + '.',
  });
export type ResponsesRequest = z.infer<typeof ResponsesRequest>;

export const ResponsesInputTokensRequest = ResponsesRequest.omit({ stream: true }).meta({
  id: 'ResponsesInputTokensRequest',
  description: 'A Responses request (without `stream`): the input tokens it would use are counted, nothing is generated.',
});

export const ResponsesInputTokens = z
  .looseObject({
    object: z.literal('response.input_tokens'),
    input_tokens: z.number().int().nonnegative().describe('The input tokens of the request: input items, instructions and tools.'),
  })
  .meta({ id: 'ResponsesInputTokens' });

export const ResponsesUsage = z
  .looseObject({
    input_tokens: z.number().int(),
    input_tokens_details: z.looseObject({ cached_tokens: z.number().int(), cache_write_tokens: z.number().int().optional() }).optional(),
    output_tokens: z.number().int(),
    output_tokens_details: z.looseObject({ reasoning_tokens: z.number().int() }).optional(),
    total_tokens: z.number().int(),
  })
  .meta({ id: 'ResponsesUsage' });

export const ResponsesOutputItem = z
  .union([
    z.looseObject({
      type: z.literal('message'),
      id: z.string(),
      role: z.literal('assistant'),
      status: z.string(),
      content: z.array(z.discriminatedUnion('type', [OutputText, Refusal])),
    }),
    z.looseObject({
      type: z.literal('function_call'),
      id: z.string(),
      call_id: z.string(),
      name: z.string(),
      arguments: z.string(),
      status: z.string().optional(),
    }),
    ReasoningItem,
    z.looseObject({ type: z.string(), id: z.string().optional() }),
  ])
  .meta({ id: 'ResponsesOutputItem' });

export const ResponseObject = z
  .looseObject({
    id: z.string(),
    object: z.literal('response'),
    created_at: unixSeconds,
    status: z.enum(['completed', 'failed', 'in_progress', 'cancelled', 'queued', 'incomplete']),
    error: z.looseObject({ code: z.string(), message: z.string() }).nullable(),
    incomplete_details: z.looseObject({ reason: z.string() }).nullable(),
    model: z.string(),
    output: z.array(ResponsesOutputItem),
    usage: ResponsesUsage.nullable().optional(),
  })
  .meta({ id: 'Response' });

const seq = { sequence_number: z.number().int() };
const itemRef = { item_id: z.string(), output_index: z.number().int() };
export const ResponsesStreamEvent = z
  .discriminatedUnion('type', [
    z.looseObject({ type: z.literal('response.created'), response: ResponseObject, ...seq }),
    z.looseObject({ type: z.literal('response.in_progress'), response: ResponseObject, ...seq }),
    z.looseObject({ type: z.literal('response.output_item.added'), output_index: z.number().int(), item: ResponsesOutputItem, ...seq }),
    z.looseObject({ type: z.literal('response.output_item.done'), output_index: z.number().int(), item: ResponsesOutputItem, ...seq }),
    z.looseObject({ type: z.literal('response.content_part.added'), ...itemRef, content_index: z.number().int(), part: z.looseObject({ type: z.string() }), ...seq }),
    z.looseObject({ type: z.literal('response.content_part.done'), ...itemRef, content_index: z.number().int(), part: z.looseObject({ type: z.string() }), ...seq }),
    z.looseObject({ type: z.literal('response.output_text.delta'), ...itemRef, content_index: z.number().int(), delta: z.string(), ...seq }),
    z.looseObject({ type: z.literal('response.output_text.done'), ...itemRef, content_index: z.number().int(), text: z.string(), ...seq }),
    z.looseObject({ type: z.literal('response.output_text.annotation.added'), ...itemRef, content_index: z.number().int(), annotation: z.unknown(), ...seq }),
    z.looseObject({ type: z.literal('response.refusal.delta'), ...itemRef, content_index: z.number().int(), delta: z.string(), ...seq }),
    z.looseObject({ type: z.literal('response.refusal.done'), ...itemRef, content_index: z.number().int(), refusal: z.string(), ...seq }),
    z.looseObject({ type: z.literal('response.function_call_arguments.delta'), ...itemRef, delta: z.string(), ...seq }),
    z.looseObject({ type: z.literal('response.function_call_arguments.done'), ...itemRef, arguments: z.string(), name: z.string().optional(), ...seq }),
    z.looseObject({ type: z.literal('response.reasoning_summary_part.added'), ...itemRef, summary_index: z.number().int(), ...seq }),
    z.looseObject({ type: z.literal('response.reasoning_summary_part.done'), ...itemRef, summary_index: z.number().int(), ...seq }),
    z.looseObject({ type: z.literal('response.reasoning_summary_text.delta'), ...itemRef, summary_index: z.number().int(), delta: z.string(), ...seq }),
    z.looseObject({ type: z.literal('response.reasoning_summary_text.done'), ...itemRef, summary_index: z.number().int(), text: z.string(), ...seq }),
    z.looseObject({ type: z.literal('response.completed'), response: ResponseObject, ...seq }),
    z.looseObject({ type: z.literal('response.incomplete'), response: ResponseObject, ...seq }),
    z.looseObject({ type: z.literal('response.failed'), response: ResponseObject, ...seq }),
    z.looseObject({ type: z.literal('error'), code: z.string().nullable(), message: z.string(), param: z.string().nullable(), error: ErrorObject.optional(), ...seq }),
  ])
  .meta({
    id: 'ResponsesStreamEvent',
    description:
      'Responses stream: `event: <type>` + `data: <json>`, `sequence_number` from 0. Ends with response.completed, response.incomplete or response.failed (after an `error` event).',
  });
