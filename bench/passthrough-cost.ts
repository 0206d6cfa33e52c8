// What a byte-forwarding pass-through path could save at most: the per-request work of the
// same-format chat path that such a path would skip, timed alone on one thread with the
// benchmark's own request and answer bodies, and the bytes each step allocates (GC's share).
// `npm run bench:passthrough [-- N]`: no server, no network. The script's flags give V8 a young
// generation large enough that no collection runs inside a measured loop, so the time is the
// code's own and the heap's growth is what it allocated.
import { ChatCompletionRequest } from '../contract/chat.ts';
import { chatToCanonical } from '../server/translate/chat.ts';
import { chatFormat } from '../server/capabilities/text/formats.ts';
import { decodeChatResponse } from '../server/providers/openai/chat.ts';
import { withClientModel } from '../server/translate/model-id.ts';
import { chatBody } from './contenders.ts';
import { CHAT_BODY } from './mocks.ts';

const requestText = chatBody('bench-chat');
const N = Number(process.argv[2] ?? 200_000);
/** Calls per allocation count: few enough to fit the young generation the script's flags set. */
const ALLOC_CALLS = 10_000;
const gc = (globalThis as { gc?: () => void }).gc;

interface Cost { us: number; bytes: number }

/** Median of 5 timed runs of N calls (after a warm-up of N), and bytes allocated per call. */
function measure(name: string, fn: () => unknown): Cost {
  for (let i = 0; i < N; i++) fn();
  const runs: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < N; i++) fn();
    runs.push(Number(process.hrtime.bigint() - t) / 1000 / N);
  }
  const us = runs.sort((a, b) => a - b)[2]!;
  let bytes = Number.NaN;
  if (gc) {
    gc();
    const before = process.memoryUsage().heapUsed;
    const keep: unknown[] = [undefined];
    for (let i = 0; i < ALLOC_CALLS; i++) keep[0] = fn();
    bytes = (process.memoryUsage().heapUsed - before) / ALLOC_CALLS;
  }
  console.log(`${name.padEnd(62)} ${us.toFixed(2).padStart(6)} µs ${bytes.toFixed(0).padStart(6)} B`);
  return { us, bytes };
}

const sum = (costs: Cost[]): Cost => ({
  us: costs.reduce((a, c) => a + c.us, 0),
  bytes: costs.reduce((a, c) => a + c.bytes, 0),
});

const raw = JSON.parse(requestText);
const { codec } = await chatFormat.decode(raw, { headers: {}, items: { lookup: async () => new Map(), remember: () => {} } });
if (!ChatCompletionRequest.safeParse(raw).success) throw new Error('the benchmark request does not pass the contract');
console.log(`request ${requestText.length} bytes, answer ${CHAT_BODY.length} bytes, ${N} calls per run`);
if (!gc) console.log('(no --expose-gc: allocation not counted; run it as npm run bench:passthrough)');
console.log(`${''.padEnd(62)}   time  alloc`);
// What a pass-through path does too: it must read the model and `stream` from the request, and
// the answer must still carry the model id the client sent.
const stays = sum([
  measure('JSON.parse of the request (stays)', () => JSON.parse(requestText)),
  measure('withClientModel: the model id rewritten in the bytes (stays)', () =>
    withClientModel(CHAT_BODY, 'gpt-4o-mini-2024-07-18', 'bench-chat', () => '')),
]);
const skippable = sum([
  measure('contract validation (zod) of the request', () => ChatCompletionRequest.safeParse(raw)),
  measure('chatToCanonical (the canonical request)', () => chatToCanonical(raw)),
  measure('passthroughBody + JSON.stringify of the upstream body', () =>
    JSON.stringify(codec.passthroughBody('gpt-4o-mini'))),
  // A scanner reading `usage` from the bytes would replace the parse and the decoding of the answer.
  measure('JSON.parse of the answer + decodeChatResponse', () => decodeChatResponse(JSON.parse(CHAT_BODY))),
]);
console.log(
  `\nskippable at most: ${skippable.us.toFixed(2)} µs and ${skippable.bytes.toFixed(0)} B allocated per request` +
    ` (what stays: ${stays.us.toFixed(2)} µs, ${stays.bytes.toFixed(0)} B)`,
);
