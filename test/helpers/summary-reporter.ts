// Prints one plain closing line, `tests: N passed, N failed[, N skipped]`, that any CI log reader understands.
import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>) {
    let passed = 0;
    let failed = unhandledErrors.length;
    let skipped = 0;
    const unfinished: string[] = [];
    for (const mod of testModules) {
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
    for (const id of unfinished) process.stdout.write(`\nnot finished: ${path.relative(process.cwd(), id)}`);
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  }
}
