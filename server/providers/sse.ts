import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { Readable } from 'node:stream';

/**
 * Server-sent events from an upstream body, parsed incrementally (CRLF or LF framing, comment
 * lines such as OpenRouter's keep-alives skipped). Yields each event as it completes.
 */
export async function* readSse(body: Readable | AsyncIterable<Buffer>): AsyncGenerator<EventSourceMessage> {
  const queue: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (e) => queue.push(e) });
  const decoder = new TextDecoder();
  for await (const chunk of body as AsyncIterable<Buffer>) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    while (queue.length) yield queue.shift()!;
  }
  parser.feed(decoder.decode() + '\n\n');
  while (queue.length) yield queue.shift()!;
}
