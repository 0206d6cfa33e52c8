// server/translate/arguments-and-effort.ts: tool-call argument text → JSON object, and reasoning
// effort ↔ thinking budget.
import { describe, expect, it } from 'vitest';
import { budgetToEffort, effortBudgets, parseJsonArgs, reasoningBudget } from '../../server/translate/arguments-and-effort.ts';
import { VERCEL, atString, fixtureJson } from './fixtures.ts';

describe('parseJsonArgs', () => {
  it('an OpenAI-format arguments string as recorded (xAI tool call) becomes its object', () => {
    const args = atString(fixtureJson(`${VERCEL}openai-compatible/src/chat/__fixtures__/xai-tool-call.json`), 'choices', 0, 'message', 'tool_calls', 0, 'function', 'arguments');
    expect(parseJsonArgs(args)).toEqual({ location: 'San Francisco' });
  });

  it.each([
    ['', {}],
    ['  \n', {}],
    ['{}', {}],
    ['{"a":{"b":[1,2]}}', { a: { b: [1, 2] } }],
    ['[1,2]', { value: [1, 2] }],
    ['42', { value: 42 }],
    ['"x"', { value: 'x' }],
    ['null', { value: null }],
    ['{"location": "Par', { _raw: '{"location": "Par' }],
  ])('%j → %j', (text, expected) => {
    expect(parseJsonArgs(text)).toEqual(expected);
  });
});

describe('effort ↔ budget', () => {
  it('the budget of each effort', () => {
    expect(effortBudgets).toEqual({ minimal: 1024, low: 2048, medium: 8192, high: 16384, xhigh: 32768, max: 32768 });
  });

  it.each([
    [-1, 'none'],
    [0, 'none'],
    [1, 'minimal'],
    [1024, 'minimal'],
    [1025, 'low'],
    [4096, 'low'],
    [4097, 'medium'],
    [12288, 'medium'],
    [12289, 'high'],
    [24576, 'high'],
    [24577, 'xhigh'],
    [128000, 'xhigh'],
  ] as const)('budget %d → %s', (budget, effort) => {
    expect(budgetToEffort(budget)).toBe(effort);
  });

  it("each effort's budget maps back to that effort (max, Gemini's ceiling, reads as xhigh)", () => {
    expect(Object.entries(effortBudgets).map(([effort, budget]) => [effort, budgetToEffort(budget)])).toEqual([
      ['minimal', 'minimal'],
      ['low', 'low'],
      ['medium', 'medium'],
      ['high', 'high'],
      ['xhigh', 'xhigh'],
      ['max', 'xhigh'],
    ]);
  });

  it('reasoningBudget: an explicit budget wins, an effort is looked up, none is 0, adaptive alone has none', () => {
    expect(reasoningBudget(undefined)).toBeUndefined();
    expect(reasoningBudget({ budgetTokens: 3000 })).toBe(3000);
    expect(reasoningBudget({ budgetTokens: 3000, effort: 'high' })).toBe(3000);
    expect(reasoningBudget({ effort: 'high' })).toBe(16384);
    expect(reasoningBudget({ effort: 'max', adaptive: true })).toBe(32768);
    expect(reasoningBudget({ effort: 'none' })).toBe(0);
    expect(reasoningBudget({ adaptive: true })).toBeUndefined();
  });
});
