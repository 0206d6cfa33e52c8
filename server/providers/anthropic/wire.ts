// Anthropic's Messages wire, as the gateway reads and writes it: the answer's fields the decoders
// read (optional where Anthropic may leave them out), the stream events, and the request body the
// encoder builds. Types only; test/mappings/wire-schemas.ts holds the same shapes as zod schemas,
// checked against the recorded answers in test/fixtures/recorded/upstreams/.

type Maybe<T> = T | null | undefined;

/** Cache writes by lifetime (they add up to `cache_creation_input_tokens`). */
export type CacheCreation = { ephemeral_5m_input_tokens?: Maybe<number>; ephemeral_1h_input_tokens?: Maybe<number> };

/** One sampling step of a request that ran several (compaction, advisor): its own usage. */
export type UsageIteration = {
  type?: string;
  /** Set when the step ran on another model (the advisor's). */
  model?: string;
  input_tokens?: Maybe<number>;
  output_tokens?: Maybe<number>;
  cache_creation_input_tokens?: Maybe<number>;
  cache_read_input_tokens?: Maybe<number>;
  cache_creation?: Maybe<CacheCreation>;
};

/**
 * `input_tokens` is the uncached input only: the prompt is input + cache reads + cache writes. In a
 * stream, message_start carries the input side and message_delta the cumulative counts (any field
 * it leaves out keeps message_start's; it never repeats `cache_creation`).
 */
export type Usage = {
  input_tokens?: Maybe<number>;
  output_tokens?: Maybe<number>;
  cache_creation_input_tokens?: Maybe<number>;
  cache_read_input_tokens?: Maybe<number>;
  cache_creation?: Maybe<CacheCreation>;
  /** Of `output_tokens`, the thinking (newer answers only). */
  output_tokens_details?: Maybe<{ thinking_tokens?: Maybe<number> }>;
  server_tool_use?: Maybe<{ web_search_requests?: Maybe<number>; web_fetch_requests?: Maybe<number> }>;
  iterations?: Maybe<UsageIteration[]>;
};

/** A citation; the decoders read web_search_result_location ones (with a url) and skip the rest. */
export type Citation = { type: string; url?: string; title?: Maybe<string> };

/** The content blocks the decoders read, by `type` (others, e.g. web_search_tool_result's body, are skipped). */
export type ContentBlock =
  | { type: 'text'; text: string; citations?: Maybe<Citation[]> }
  | { type: 'thinking'; thinking?: string; signature?: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input?: unknown }
  | { type: 'server_tool_use'; id?: string; name?: string }
  | { type: 'web_search_tool_result' };

export type Message = {
  id?: string;
  type?: 'message';
  role?: 'assistant';
  model?: string;
  content?: ContentBlock[];
  stop_reason?: Maybe<string>;
  stop_sequence?: Maybe<string>;
  usage?: Maybe<Usage>;
};

export type ContentBlockDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'input_json_delta'; partial_json?: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string }
  | { type: 'citations_delta'; citation?: Citation };

export type ErrorBody = { type?: string; message?: string };

/** The stream events MessagesStreamDecoder reads, by `type` (ping and others are skipped). */
export type StreamEvent =
  | { type: 'message_start'; message?: Message }
  | { type: 'content_block_start'; index: number; content_block?: ContentBlock }
  | { type: 'content_block_delta'; index: number; delta?: ContentBlockDelta }
  | { type: 'content_block_stop'; index: number }
  | { type: 'message_delta'; delta?: { stop_reason?: Maybe<string>; stop_sequence?: Maybe<string> }; usage?: Usage }
  | { type: 'message_stop' | 'ping' }
  | { type: 'error'; error?: ErrorBody };

// ---- the request encodeMessagesBody builds ------------------------------------------------------

/** A prompt-cache breakpoint on a block, a tool or the whole request. */
export type CacheControl = { type: 'ephemeral'; ttl?: string };

export type TextBlock = { type: 'text'; text: string; cache_control?: CacheControl };

export type ImageBlock = { type: 'image'; source: { type: 'url'; url: string } | { type: 'base64'; media_type: string; data: string }; cache_control?: CacheControl };

export type RequestBlock =
  | TextBlock
  | ImageBlock
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content: (TextBlock | ImageBlock)[]; is_error?: true; cache_control?: CacheControl }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'thinking'; thinking: string; signature: string };

/** Anthropic's own mid-conversation system messages travel as `system` turns. */
export type RequestMessage = { role: 'user' | 'assistant'; content: RequestBlock[] } | { role: 'system'; content: string };

export type Tool = { name: string; description?: string; input_schema: unknown; cache_control?: CacheControl } | { type: 'web_search_20250305'; name: 'web_search'; max_uses: number };

export type ToolChoice = { type: string; name?: string; disable_parallel_tool_use?: true };

export type Request = {
  model: string;
  messages: RequestMessage[];
  /** One string, or text blocks when some carry a cache breakpoint. */
  system?: string | TextBlock[];
  cache_control?: CacheControl;
  tools?: Tool[];
  tool_choice?: ToolChoice;
  thinking?: { type: 'adaptive' } | { type: 'enabled'; budget_tokens: number };
  output_config?: { effort: string };
  max_tokens?: number;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stop_sequences?: string[];
  metadata?: { user_id: string };
  stream?: true;
};

/** The answer of `POST /messages/count_tokens`. */
export type TokenCount = { input_tokens?: number };
