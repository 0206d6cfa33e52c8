// What every dashboard browser test checks on a page: axe's serious findings, and that no script
// error or console error went by unnoticed (the ones a test causes on purpose are expected first).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export type Violation = { id: string; impact: string; nodes: { target: string[] }[] };

/** axe (WCAG 2.1 A/AA and best practice) on the page as it is: the serious and critical findings. */
export async function axe(p: Page): Promise<Violation[]> {
  if (!(await p.evaluate(() => 'axe' in globalThis))) await p.addScriptTag({ content: axeSource });
  const violations = await p.evaluate(async () => {
    const a = (globalThis as unknown as { axe: { run(o: unknown): Promise<{ violations: Violation[] }> } }).axe;
    return (await a.run({ runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } })).violations;
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/**
 * Collects the page's script errors and console errors into `errors`; one matching an entry of
 * `expected` (an error the test causes) uses that entry up instead.
 */
export function watchErrors(p: Page, errors: string[], expected: RegExp[]): void {
  p.on('pageerror', (err) => errors.push(`${p.url()}: ${err.message}`));
  p.on('console', (m) => {
    if (m.type() !== 'error') return;
    const text = `${p.url()}: ${m.text()}`;
    const i = expected.findIndex((e) => e.test(text));
    if (i >= 0) expected.splice(i, 1);
    else errors.push(text);
  });
}
