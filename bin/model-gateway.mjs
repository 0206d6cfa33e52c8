#!/usr/bin/env node
// The CLI entry. Runs the esbuild bundle of the sources (rebuilt when a source changed);
// without esbuild it falls back to the sources through tsx's loader.
import { setFlagsFromString } from 'node:v8';
import { ensureBundle } from '../scripts/bundle.mjs';
import { ensureWebBuild } from '../scripts/build-web.mjs';

// The embedded database (PGlite) and Prisma's query compiler are WebAssembly. V8 compiles it
// first with its baseline compiler, then recompiles hot functions with its optimising one; the
// second tier held ~60 MB of code and compiler memory for good and saved no measurable CPU per
// request (docs/decisions/0005). Must run before any module is compiled; GATEWAY_WASM_OPTIMIZE=1
// keeps both tiers.
if (process.env.GATEWAY_WASM_OPTIMIZE !== '1') setFlagsFromString('--liftoff-only');

// After each full collection V8 lets the heap grow to up to 4x what survived before the next one.
// Under thousands of concurrent streams that headroom filled with garbage (peaks ~580 MB for a
// ~70 MB live heap); 1.25x keeps the peak near 350 MB for no measurable CPU (docs/decisions/0005).
// Read by V8 at every collection, so setting it here works. GATEWAY_HEAP_GROWING_PERCENT=0: V8's own.
setFlagsFromString(`--heap-growing-percent=${Number(process.env.GATEWAY_HEAP_GROWING_PERCENT ?? 25) || 0}`);

// Stack traces in logs name the sources, not lines of the bundle.
process.setSourceMapsEnabled(true);

const bundle = process.env.MODEL_GATEWAY_FROM_SOURCE === '1' ? null : await ensureBundle();
// The dashboard's assets, rebuilt when web/ changed (a failed build leaves the API serving and the
// dashboard's pages saying how to build it). A worker of `serve --workers N` (its primary set
// MODEL_GATEWAY_WORKER, server/runtime/cluster.ts) finds them built by its primary: N processes
// would only race to rebuild them.
if (process.argv[2] === 'serve' && !process.env.MODEL_GATEWAY_WORKER) await ensureWebBuild().catch((err) => console.error(`dashboard build failed: ${err.message}`));
let runCli;
if (bundle) {
  ({ runCli } = await import(bundle));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ runCli } = await import('../server/cli.ts'));
}
await runCli(process.argv);
