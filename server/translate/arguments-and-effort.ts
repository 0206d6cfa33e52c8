// Helpers shared by the client formats and the vendor converters: tool-call arguments as JSON
// objects, and reasoning effort <-> thinking budget.
import type * as C from './canonical.ts';

export function parseJsonArgs(text: string): Record<string, unknown> {
  if (!text.trim()) return {};
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : { value: v };
  } catch {
    return { _raw: text };
  }
}

/** Reasoning effort ↔ thinking token budget, used where one side has efforts and the other budgets. */
export const effortBudgets: Record<Exclude<C.ReasoningEffort, 'none'>, number> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
  xhigh: 32768,
  // Gemini refuses larger budgets; Anthropic's own clients send `max` as an effort, not a budget.
  max: 32768,
};

export function budgetToEffort(budget: number): C.ReasoningEffort {
  if (budget <= 0) return 'none';
  if (budget <= 1024) return 'minimal';
  if (budget <= 4096) return 'low';
  if (budget <= 12288) return 'medium';
  if (budget <= 24576) return 'high';
  return 'xhigh';
}

export function reasoningBudget(r: C.Request['reasoning']): number | undefined {
  if (!r) return undefined;
  if (r.budgetTokens !== undefined) return r.budgetTokens;
  if (!r.effort) return undefined;
  return r.effort === 'none' ? 0 : effortBudgets[r.effort];
}
