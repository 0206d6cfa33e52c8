// server/translate/request-fields.ts: which top-level fields of each client format are read,
// dropped silently, known but untranslatable, or unknown — and the warning naming them.
import { describe, expect, it } from 'vitest';
import { CHAT_FIELDS, MESSAGES_FIELDS, RESPONSES_FIELDS, droppedFields, unknownFieldsWarning } from '../../server/translate/request-fields.ts';

const namesOf = (sets: typeof CHAT_FIELDS) => [...sets.translated, ...sets.known];

describe('droppedFields', () => {
  it('chat: translated and silent fields pass, a known field is untranslated, a misspelling unknown', () => {
    const body = { model: 'm', messages: [], temperature: 1, n: 1, user: 'u', logprobs: true, temprature: 0.2, frobnicate: 1 };
    expect(droppedFields(body, CHAT_FIELDS)).toEqual({
      untranslated: ['logprobs'],
      unknown: [
        { name: 'temprature', meant: namesOf(CHAT_FIELDS) },
        { name: 'frobnicate', meant: namesOf(CHAT_FIELDS) },
      ],
    });
  });

  it('chat: the caching hints are read (cache_control) or named where dropped (prompt_cache_key, prompt_cache_retention)', () => {
    const body = { model: 'm', messages: [], cache_control: { type: 'ephemeral' }, prompt_cache_key: 'k', prompt_cache_retention: '24h' };
    expect(droppedFields(body, CHAT_FIELDS)).toEqual({ untranslated: ['prompt_cache_key', 'prompt_cache_retention'], unknown: [] });
  });

  it('Responses: the same hints the same way', () => {
    const body = { model: 'm', input: 'hi', cache_control: { type: 'ephemeral' }, prompt_cache_key: 'k', prompt_cache_retention: 'in_memory' };
    expect(droppedFields(body, RESPONSES_FIELDS)).toEqual({ untranslated: ['prompt_cache_key', 'prompt_cache_retention'], unknown: [] });
  });

  it('Messages: cache_control is read (named by the engine where dropped), context_management untranslated, stop_sequence unknown', () => {
    const body = { model: 'm', messages: [], max_tokens: 10, cache_control: { type: 'ephemeral' }, context_management: { edits: [] }, stop_sequence: ['x'] };
    expect(droppedFields(body, MESSAGES_FIELDS)).toEqual({ untranslated: ['context_management'], unknown: [{ name: 'stop_sequence', meant: namesOf(MESSAGES_FIELDS) }] });
  });

  it('Responses: store and include are silent, truncation untranslated', () => {
    expect(droppedFields({ model: 'm', input: 'hi', store: true, include: [], stream_options: {}, truncation: 'auto' }, RESPONSES_FIELDS)).toEqual({ untranslated: ['truncation'], unknown: [] });
  });
});

describe('unknownFieldsWarning', () => {
  it('names the closest field when one is within two edits', () => {
    expect(unknownFieldsWarning([{ name: 'temprature', meant: namesOf(CHAT_FIELDS) }])).toBe('unknown field, dropped: temprature (did you mean temperature?)');
    expect(unknownFieldsWarning([{ name: 'stop_sequence', meant: namesOf(MESSAGES_FIELDS) }])).toBe('unknown field, dropped: stop_sequence (did you mean stop_sequences?)');
    expect(unknownFieldsWarning([{ name: 'max_tokns', meant: namesOf(CHAT_FIELDS) }])).toBe('unknown field, dropped: max_tokns (did you mean max_tokens?)');
  });

  it('plural, and no guess for a name far from every field', () => {
    expect(unknownFieldsWarning([{ name: 'temprature', meant: namesOf(CHAT_FIELDS) }, { name: 'frobnicate', meant: namesOf(CHAT_FIELDS) }])).toBe(
      'unknown fields, dropped: temprature (did you mean temperature?), frobnicate',
    );
  });
});
