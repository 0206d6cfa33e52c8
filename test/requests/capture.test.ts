// What captured bodies keep (issue 36): credentials' values and media payloads go, the rest stays
// byte for byte; a body over the cap is cut and says so.
import { describe, expect, it } from 'vitest';
import { BodyCapture, elide, requestText, storedBody } from '../../server/requests/capture.ts';

describe('elide', () => {
  it('replaces the values of credential members, whatever their case, and keeps everything else', () => {
    const text = '{"model":"m","API_KEY":"sk-1","metadata":{"password":"p\\"w","token":"t"},"tokens":5,"max_tokens":3}';
    expect(elide(text)).toBe('{"model":"m","API_KEY":"[redacted]","metadata":{"password":"[redacted]","token":"[redacted]"},"tokens":5,"max_tokens":3}');
  });

  it('notes a data URL’s payload with its media type and size, and long base64 runs in JSON or SSE', () => {
    const png = 'A'.repeat(400);
    expect(elide(`{"url":"data:image/png;base64,${png}"}`)).toBe('{"url":"data:image/png;base64,[elided: 300 bytes]"}');
    const audio = 'UklGR'.repeat(100);
    expect(elide(`data: {"delta":{"audio":{"data":"${audio}"}}}\n\n`)).toBe('data: {"delta":{"audio":{"data":"[elided: 375 bytes of base64]"}}}\n\n');
    // Short base64-looking words are text.
    expect(elide('{"content":"SGVsbG8gd29ybGQ="}')).toBe('{"content":"SGVsbG8gd29ybGQ="}');
  });
});

describe('BodyCapture', () => {
  it('keeps the first bytes up to its cap, counts all of them, and copies what it keeps', () => {
    const c = new BodyCapture(10);
    const buf = Buffer.from('hello ');
    c.add(buf);
    buf.fill(0x78); // the writer reuses its buffer
    c.add('world, and more', 'utf8');
    c.add(undefined);
    expect(c.text()).toBe('hello worl');
    expect(c.total).toBe(21);
    expect(c.truncated).toBe(true);
  });

  it('a body over the cap is stored with a last line saying how much there was', () => {
    expect(storedBody('0123456789', 21, 10)).toBe('0123456789\n[cut: 21 bytes in all, the first 10 kept]');
    expect(storedBody('short', 5, 10)).toBe('short');
  });
});

describe('requestText', () => {
  it('a parsed JSON body as JSON, a form upload as a note, binary as its type and size', () => {
    expect(requestText({ model: 'm', messages: [] }, 'application/json', 100)).toBe('{"model":"m","messages":[]}');
    expect(requestText(undefined, 'multipart/form-data; boundary=x', 100)).toBe('[multipart upload: not captured]');
    expect(requestText(Buffer.alloc(7), 'audio/mpeg', 100)).toBe('[audio/mpeg: 7 bytes, not captured]');
  });
});
