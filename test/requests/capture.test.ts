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
    expect(storedBody('0123456789', 10, 5)).toBe('01234\n[cut: 10 bytes in all, the first 5 kept after eliding secrets and media]');
    expect(storedBody('short', 5, 10)).toBe('short');
  });

  it('elides before it cuts: a secret across the cap is redacted whole, never stored in part (issue 42)', () => {
    const body = `{"model":"m","api_key":"sk-${'s'.repeat(40)}","x":1}`;
    const cap = body.indexOf('sss') + 5;
    const stored = storedBody(body, body.length, cap);
    expect(stored).not.toContain('sss');
    expect(stored.startsWith('{"model":"m","api_key":"[red')).toBe(true);
    // A window cut inside the body drops its end before eliding: what the window cut in part is gone.
    const long = `{"a":"${'x'.repeat(10_000)}","token":"${'t'.repeat(30)}"}`;
    const window = long.slice(0, long.indexOf('ttt') + 10);
    expect(storedBody(window, long.length, 20_000)).not.toContain('ttt');
  });

  it('elides a media payload before cutting, so the cap keeps text, and redacts hosted links', () => {
    const body = `{"image":"data:image/png;base64,${'A'.repeat(50_000)}","prompt":"a cat","url":"http://gw/v1/files/abc_DEF.1234567890.sig-_x"}`;
    const stored = storedBody(body, body.length, 400);
    expect(stored).toContain('"prompt":"a cat"');
    expect(stored).toContain('/v1/files/[redacted]');
    expect(stored).not.toContain('1234567890.sig');
  });
});

describe('requestText', () => {
  it('a parsed JSON body as JSON, a form upload as a note, binary as its type and size', () => {
    expect(requestText({ model: 'm', messages: [] }, 'application/json', 100)).toBe('{"model":"m","messages":[]}');
    expect(requestText(undefined, 'multipart/form-data; boundary=x', 100)).toBe('[multipart upload: not captured]');
    expect(requestText(Buffer.alloc(7), 'audio/mpeg', 100)).toBe('[audio/mpeg: 7 bytes, not captured]');
  });
});
