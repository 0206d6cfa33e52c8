// A URL as the gateway records it (issue 42): credentials replaced however the client spelled them.
import { describe, expect, it } from 'vitest';
import { recordedPath, redactUrl } from '../../server/http/redact-url.ts';

describe('redactUrl', () => {
  it('redacts secret parameters by name whatever their case or brackets, and key-shaped values whatever their name', () => {
    expect(redactUrl('/v1/models?KEY=abc&key[]=def&Api_Key=ghi&x=1')).toBe('/v1/models?KEY=redacted&key%5B%5D=redacted&Api_Key=redacted&x=1');
    expect(redactUrl('/v1/models?foo=mg-0123456789abcdefXYZ&bar=AIzaSyA0123456789abcdefghijklmno&q=cats')).toBe('/v1/models?foo=redacted&bar=redacted&q=cats');
    expect(redactUrl('/signin?next=%2Foauth%2Fauthorize%3Fcode%3Dsecret%26state%3Ds')).toBe('/signin?next=%2Foauth%2Fauthorize%3Fcode%3Dredacted%26state%3Dredacted');
  });

  it('redacts a hosted file’s token on the decoded, normalised path', () => {
    for (const path of ['/v1/files/abc.123.sig', '/v1/%66iles/abc.123.sig', '/v1//files/abc.123.sig', '/V1/FILES/abc.123.sig']) {
      expect(redactUrl(`${path}?download=1`)).toBe('/v1/files/redacted?download=1');
      expect(recordedPath(path)).toBe('/v1/files/redacted');
    }
    expect(recordedPath('/v1/files/')).toBe('/v1/files/');
  });

  it('bounds what it records', () => {
    expect(recordedPath(`/v1/${'a'.repeat(5000)}`)).toHaveLength(2049);
    expect(redactUrl(`/v1/models?q=${'b'.repeat(5000)}`).length).toBeLessThanOrEqual(2049);
  });
});
