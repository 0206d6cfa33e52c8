// Prints one plain closing line, `tests: N passed, N failed[, N skipped]`, that any CI log reader
// understands, after the slowest test files (import and tests, wall time): what to make faster
// when CI grows past its budget (README, "Tests").
import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** How many of the slowest files are named (none when the run has no more files than that). */
const SLOWEST = 15;

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>) {
    let passed = 0;
    let failed = unhandledErrors.length;
    let skipped = 0;
    const unfinished: string[] = [];
    const durations: [string, number][] = [];
    for (const mod of testModules) {
      const d = mod.diagnostic();
      durations.push([path.relative(process.cwd(), mod.moduleId), d.collectDuration + d.duration]);
      // A file whose worker exited before reporting its end is named here: the runner's own error
      // ("Worker exited unexpectedly") does not say which file it was running.
      const state = mod.state();
      if (state !== 'passed' && state !== 'failed' && state !== 'skipped') unfinished.push(mod.moduleId);
      let failedHere = 0;
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failedHere++;
        else skipped++;
      }
      // A file that failed outside its tests (import, beforeAll) counts once, even if its tests were skipped.
      failed += mod.state() === 'failed' && !failedHere ? 1 : failedHere;
    }
    const slowest = durations.sort((a, b) => b[1] - a[1]).slice(0, SLOWEST);
    if (durations.length > SLOWEST) process.stdout.write(`\nslowest test files: ${slowest.map(([f, ms]) => `${f} ${(ms / 1000).toFixed(1)} s`).join(', ')}\n`);
    for (const id of unfinished) process.stdout.write(`\nnot finished: ${path.relative(process.cwd(), id)}`);
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  }
}
