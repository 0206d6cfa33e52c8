// The secrets this process holds, redacted by value wherever the gateway emits text (decision
// 0034). Patterns (key prefixes, `Bearer …`) catch the credentials of most vendors, but not a pool
// key, a Gemini key or an OpenAI-compatible token without a known prefix, nor the gateway's own
// secret: an upstream that echoes the key it was sent would hand it to the client, the logs, the
// traces and the captured bodies. So every secret the process loads is registered here once, and
// the places that emit text — error messages (GatewayError, UpstreamError), log lines, span
// attributes, captured bodies — replace any of them with `[redacted]`.
//
// Process-wide on purpose: what the process holds is a fact of the process (as its environment is),
// and the emitters sit in every layer, from the logger's stream to an error's constructor. Tests
// that start several gateways in one process only add values to redact.

/**
 * A value shorter than this is not a credential worth the name, and would redact ordinary text (a
 * database password `postgres` would blank out the word in every line; no provider key is as short).
 */
const MIN_LENGTH = 10;

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

class HeldSecrets {
  private readonly values = new Set<string>();
  /** One alternation of every value, longest first; null while there is none. */
  private pattern: RegExp | null = null;

  /** Registers secrets (undefined, empty and short values are skipped); returns how many were new. */
  add(...values: (string | null | undefined)[]): number {
    let added = 0;
    for (const raw of values) {
      const v = raw?.trim();
      if (!v || v.length < MIN_LENGTH || this.values.has(v)) continue;
      this.values.add(v);
      // As JSON writes it too (a log line, a captured body): a value with `"` or `\` changes there.
      const json = JSON.stringify(v).slice(1, -1);
      if (json !== v) this.values.add(json);
      added++;
    }
    if (added) {
      // Longest first: a secret that contains another is replaced whole.
      const all = [...this.values].sort((a, b) => b.length - a.length);
      this.pattern = new RegExp(all.map(escape).join('|'), 'g');
    }
    return added;
  }

  /** `text` with every held secret replaced by `[redacted]` (V8 scans an alternation of literals in one pass). */
  redact(text: string): string {
    const p = this.pattern;
    if (!p || text.length < MIN_LENGTH) return text;
    p.lastIndex = 0;
    if (!p.test(text)) return text;
    p.lastIndex = 0;
    return text.replace(p, '[redacted]');
  }

  get size(): number {
    return this.values.size;
  }
}

export const heldSecrets = new HeldSecrets();

/** Shorthand for `heldSecrets.redact`. */
export const redactHeldSecrets = (text: string) => heldSecrets.redact(text);
