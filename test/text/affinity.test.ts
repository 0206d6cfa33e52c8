// A text request's cache affinity key: the client's hint, else the cacheable prefix of a conversation.
import { expect, it } from 'vitest';
import { affinityKey } from '../../server/pipeline/affinity.ts';
import { chatToCanonical } from '../../server/translate/chat.ts';
import type * as C from '../../server/translate/canonical.ts';

const system = 'You are a careful assistant who answers in full sentences. '.repeat(80); // ~1,200 tokens
const req = (messages: C.Message[], extra: Partial<C.Request> = {}): C.Request => ({ model: 'm', system: [system], messages, stream: false, ...extra });
const user = (text: string): C.Message => ({ role: 'user', content: [{ type: 'text', text }] });
const assistant = (text: string): C.Message => ({ role: 'assistant', content: [{ type: 'text', text }] });

it('every turn of one conversation has the same key; another conversation another', () => {
  const first = affinityKey(req([user('About rivers?')]), 1024);
  expect(first).toMatch(/^prefix:[A-Za-z0-9_-]{22}$/);
  expect(affinityKey(req([user('About rivers?'), assistant('Rivers flow.'), user('And lakes?')]), 1024)).toBe(first);
  expect(affinityKey(req([user('About mountains?')]), 1024)).not.toBe(first);
});

it('a prefix shorter than providers cache has none; the client hint always has one', () => {
  expect(affinityKey({ ...req([user('hi')]), system: ['Be brief.'] }, 1024)).toBeNull();
  expect(affinityKey({ ...req([user('hi')]), system: ['Be brief.'], affinityHint: 'prompt_cache_key:session-7' }, 1024)).toBe('prompt_cache_key:session-7');
});

it('prompt_cache_key wins over the end-user ids a chat request carries', () => {
  const body = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }], user: 'u-1', safety_identifier: 's-1', prompt_cache_key: 'conv-9' };
  expect(chatToCanonical(body).affinityHint).toBe('prompt_cache_key:conv-9');
  expect(chatToCanonical({ ...body, prompt_cache_key: undefined }).affinityHint).toBe('safety_identifier:s-1');
});
