// The V8 flags the CLI sets before anything compiles (bin/model-gateway.mjs, decision 0005), for the
// processes the tests run the gateway in: the embedded database's WebAssembly gets baseline (Liftoff)
// code only, as it does in the product. With V8's optimising tier on as well, a test worker once died
// with no JavaScript error at all ("Worker exited unexpectedly" on Node 24, CI of 2026-11-25): a
// native crash of the kind reported for PGlite's WebAssembly under load (nodejs/node#64500). Whether
// or not this flag avoids that crash, tests should exercise the engine the way it ships.
export const ENGINE_FLAGS = ['--liftoff-only'];
