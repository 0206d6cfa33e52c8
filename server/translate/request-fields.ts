// The top-level fields of each client format, sorted by what translation does with them: read
// into the canonical request, dropped without a word (hints that do not change the answer), known
// to the format but with no place in another provider's (named "not supported" when dropped), and
// everything else: unknown to the format — a misspelling (`temprature`) or another API's field —
// named "unknown field" when dropped. Passed through to the format's own upstream, every field is
// kept as sent: the real provider decides.
import { chatStrippedFields } from '../../contract/chat.ts';
import { responsesStrippedFields } from '../../contract/responses.ts';
import { closest } from '../config/schema-keys.ts';

export type FieldSets = { translated: ReadonlySet<string>; silent: ReadonlySet<string>; known: ReadonlySet<string> };
/** `meant`: the format's field names, for the guess, made only when the warning is (pass-through requests never need it). */
export type UnknownField = { name: string; meant: readonly string[] };

const set = (...names: string[]) => new Set(names);

/** OpenAI chat completions (the `openai` SDK's ChatCompletionCreateParams). */
export const CHAT_FIELDS: FieldSets = {
  translated: set(
    'model', 'messages', 'max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'top_k', 'seed', 'frequency_penalty', 'presence_penalty',
    'stop', 'reasoning_effort', 'response_format', 'tools', 'tool_choice', 'parallel_tool_calls', 'stream', 'stream_options', 'web_search_options',
    // OpenRouter's request-wide cache breakpoint: read, and named where the upstream has no cache to steer.
    'cache_control',
  ),
  silent: set(...chatStrippedFields),
  known: set(
    'audio', 'function_call', 'functions', 'logit_bias', 'logprobs', 'top_logprobs', 'modalities', 'moderation', 'prediction',
    // OpenAI's caching hints: passed through to OpenAI-wire upstreams, no equivalent elsewhere.
    'prompt_cache_key', 'prompt_cache_options', 'prompt_cache_retention', 'verbosity',
  ),
};

/** Anthropic Messages (the `@anthropic-ai/sdk` MessageCreateParams, beta fields included). */
export const MESSAGES_FIELDS: FieldSets = {
  // `cache_control` (the request-wide breakpoint) is read like the blocks' ones, and named where it is dropped.
  translated: set('model', 'messages', 'max_tokens', 'system', 'stream', 'temperature', 'top_p', 'top_k', 'stop_sequences', 'tools', 'tool_choice', 'thinking', 'output_config', 'output_format', 'metadata', 'cache_control'),
  silent: set(),
  known: set(
    'container', 'context_management', 'mcp_servers', 'service_tier', 'speed', 'inference_geo', 'diagnostics', 'user_profile_id', 'workspace_id',
    'compaction', 'thread', 'fallbacks', 'billing_policy', 'fallback_credit_token',
  ),
};

/** OpenAI Responses (the `openai` SDK's ResponseCreateParams). */
export const RESPONSES_FIELDS: FieldSets = {
  translated: set('model', 'input', 'instructions', 'tools', 'tool_choice', 'temperature', 'top_p', 'max_output_tokens', 'reasoning', 'text', 'parallel_tool_calls', 'stream', 'previous_response_id', 'cache_control'),
  // Stored responses and extra output the gateway makes itself for other providers: nothing is lost.
  silent: set(...responsesStrippedFields, 'store', 'include', 'stream_options'),
  known: set('truncation', 'max_tool_calls', 'top_logprobs', 'conversation', 'prompt', 'moderation', 'prompt_cache_key', 'prompt_cache_options', 'prompt_cache_retention'),
};

/** Every field name of a format (made once per format). */
const namesCache = new WeakMap<FieldSets, readonly string[]>();
function namesOf(sets: FieldSets): readonly string[] {
  let names = namesCache.get(sets);
  if (!names) namesCache.set(sets, (names = [...sets.translated, ...sets.known]));
  return names;
}

/** The fields of `body` a translation drops: those of the format it cannot carry, and unknown ones. */
export function droppedFields(body: object, sets: FieldSets): { untranslated: string[]; unknown: UnknownField[] } {
  const untranslated: string[] = [];
  const unknown: UnknownField[] = [];
  for (const name of Object.keys(body)) {
    if (sets.translated.has(name) || sets.silent.has(name)) continue;
    if (sets.known.has(name)) untranslated.push(name);
    else unknown.push({ name, meant: namesOf(sets) });
  }
  return { untranslated, unknown };
}

/** The X-Gateway-Warnings entry for unknown fields dropped: `unknown field, dropped: temprature (did you mean temperature?)`. */
export function unknownFieldsWarning(unknown: UnknownField[]): string {
  const list = unknown
    .map((u) => {
      const suggestion = closest(u.name, [...u.meant]);
      return suggestion ? `${u.name} (did you mean ${suggestion}?)` : u.name;
    })
    .join(', ');
  return `unknown field${unknown.length === 1 ? '' : 's'}, dropped: ${list}`;
}
