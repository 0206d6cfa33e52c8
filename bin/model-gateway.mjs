#!/usr/bin/env node
// The CLI entry. Runs the esbuild bundle of the sources (rebuilt when a source changed);
// without esbuild it falls back to the sources through tsx's loader.
import { ensureBundle } from '../scripts/bundle.mjs';

// Stack traces in logs name the sources, not lines of the bundle.
process.setSourceMapsEnabled(true);

const bundle = process.env.MODEL_GATEWAY_FROM_SOURCE === '1' ? null : await ensureBundle();
let runCli;
if (bundle) {
  ({ runCli } = await import(bundle));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ runCli } = await import('../server/cli.ts'));
}
await runCli(process.argv);
