/**
 * An upstream's JSON text with the model id the client sent in place of the upstream's. A splice
 * when the pair is written compactly, as upstreams do (no parse-and-print per stream event on the
 * pass-through path); `reprint()` otherwise. Quotes inside JSON strings are escaped, so an
 * unescaped `"model":"…"` is always a real key.
 */
export function withClientModel(data: string, upstreamModel: unknown, model: string, reprint: () => string): string {
  if (upstreamModel === model) return data;
  const from = `"model":${JSON.stringify(upstreamModel)}`;
  const at = data.indexOf(from);
  return at < 0 ? reprint() : data.slice(0, at) + `"model":${JSON.stringify(model)}` + data.slice(at + from.length);
}
