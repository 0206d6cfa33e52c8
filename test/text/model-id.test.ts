// The client's model id in an upstream's JSON text: spliced where written compactly, reprinted otherwise.
import { expect, it } from 'vitest';
import { withClientModel } from '../../server/translate/model-id.ts';

const reprintOf = (data: string) => () => JSON.stringify({ ...JSON.parse(data), model: 'mine' });

it('splices a compact pair and leaves the rest of the bytes as they were', () => {
  const data = '{"id":"c1","model":"gpt-4o-mini-2024-07-18","choices":[{"delta":{"content":"say \\"model\\":\\"x\\""}}]}';
  expect(withClientModel(data, 'gpt-4o-mini-2024-07-18', 'mine', reprintOf(data))).toBe(data.replace('gpt-4o-mini-2024-07-18', 'mine'));
});

it('does not take an escaped pair inside a string for the key', () => {
  const data = '{"choices":[{"delta":{"content":"\\"model\\":\\"up\\""}}],"model":"up"}';
  const out = withClientModel(data, 'up', 'mine', reprintOf(data));
  expect(JSON.parse(out)).toEqual({ choices: [{ delta: { content: '"model":"up"' } }], model: 'mine' });
});

it('reprints JSON written with spaces, and returns the text untouched when the ids agree', () => {
  const spaced = '{"id": "c1", "model": "up"}';
  expect(JSON.parse(withClientModel(spaced, 'up', 'mine', reprintOf(spaced)))).toEqual({ id: 'c1', model: 'mine' });
  expect(withClientModel(spaced, 'mine', 'mine', () => 'reprinted')).toBe(spaced);
});
