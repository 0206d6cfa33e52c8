// Anthropic's Messages wire, as the gateway reads and writes it: the answer's fields the decoders
// read (optional where Anthropic may leave them out), the stream events, and the request body the
// encoder builds. Types only; test/mappings/wire-schemas.ts holds the same shapes as zod schemas,
// checked against the recorded answers in test/fixtures/recorded/upstreams/.

type Maybe<T> = T | null | undefined;

export type Usage = {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: Maybe<number>;
  cache_read_input_tokens?: Maybe<number>;
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

export type ImageBlock = { type: 'image'; source: { type: 'url'; url: string } | { type: 'base64'; media_type: string; data: string } };

export type RequestBlock =
  | { type: 'text'; text: string }
  | ImageBlock
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content: ({ type: 'text'; text: string } | ImageBlock)[]; is_error?: true }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'thinking'; thinking: string; signature: string };

/** Anthropic's own mid-conversation system messages travel as `system` turns. */
export type RequestMessage = { role: 'user' | 'assistant'; content: RequestBlock[] } | { role: 'system'; content: string };

export type Tool = { name: string; description?: string; input_schema: unknown } | { type: 'web_search_20250305'; name: 'web_search'; max_uses: number };

export type ToolChoice = { type: string; name?: string; disable_parallel_tool_use?: true };

export type Request = {
  model: string;
  messages: RequestMessage[];
  system?: string;
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
