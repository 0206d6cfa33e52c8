// Pronunciation dictionaries (docs/api.md, "Speech": pronunciation rules 1–7), applied to the text before it goes
// upstream: nothing is registered with a provider. Pure: text and rules in, the text to send, the
// text as it will be spoken (for billing and the character cap) and the warnings out.
//
// Every rule is matched against the original text only, so text a rule produced is never matched
// again. Overlapping matches are settled by the longer `string_to_replace` (then the earlier
// match, then the earlier rule). Decisions for what the spec leaves open (docs/pronunciation.md):
//   - a phoneme rule the model cannot honour is skipped before matching (an alias rule on the
//     same word then applies), with a warning naming the rule and why;
//   - a phoneme rule for several words is skipped with a warning: ElevenLabs reads one word per
//     tag and ignores the rest;
//   - an empty alias deletes the matched text; a rule that matches nothing says nothing;
//   - word boundaries are Unicode letters, digits and combining marks (so "café" and "naïve" are
//     whole words, and "cat" does not match in "catégorie"); an edge of `string_to_replace` that is
//     not a word character needs no boundary there ("C++" matches before a space or a letter);
//   - once a tag is produced the whole text is markup: `&`, `<`, `>` in the text are escaped, and
//     quotes in attribute values, so nothing a user wrote can open or close a tag.

export type Alphabet = 'ipa' | 'cmu-arpabet';

export type PronunciationRule = {
  string_to_replace: string;
  type: 'alias' | 'phoneme';
  alias?: string;
  phoneme?: string;
  ph?: string;
  alphabet?: Alphabet;
  case_sensitive?: boolean;
  word_boundaries?: boolean;
};

/** What a model does with phoneme tags: the alphabets it honours (none: phoneme rules are skipped). */
export type PhonemeSupport = { model: string; alphabets: readonly Alphabet[] };

export type Pronounced = {
  /** The text to send upstream (phoneme tags inline where supported). */
  text: string;
  /** The text as spoken: aliases applied, tagged words as written (billed, and what timestamps align to). */
  spoken: string;
  /** One entry per skipped rule: which and why. */
  warnings: string[];
};

const WORD = /[\p{L}\p{N}\p{M}_]/u;

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const escapeText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escapeAttr = (s: string) => escapeText(s).replace(/"/g, '&quot;');

type Match = { start: number; end: number; rule: number; length: number };

function matcher(rule: PronunciationRule): RegExp {
  const s = rule.string_to_replace;
  const bounded = rule.word_boundaries !== false;
  const before = bounded && WORD.test(s[0]!) ? '(?<![\\p{L}\\p{N}\\p{M}_])' : '';
  const after = bounded && WORD.test(s[s.length - 1]!) ? '(?![\\p{L}\\p{N}\\p{M}_])' : '';
  return new RegExp(`${before}${escapeRegExp(s)}${after}`, rule.case_sensitive === false ? 'giu' : 'gu');
}

const quoted = (rule: PronunciationRule) => `"${rule.string_to_replace}"`;

/** Why a phoneme rule cannot be honoured on this model, or null when it can. */
function unsupported(rule: PronunciationRule, support: PhonemeSupport): string | null {
  const alphabet = rule.alphabet ?? 'ipa';
  if (!support.alphabets.length) return `model ${support.model} does not support phoneme tags; the word is read as written`;
  if (!support.alphabets.includes(alphabet)) return `model ${support.model} supports only ${support.alphabets.join(' and ')} phonemes, not ${alphabet}; the word is read as written`;
  if (/\s/.test(rule.string_to_replace.trim())) return `a phoneme tag takes one word on ${support.model}; the phrase is read as written`;
  return null;
}

export function applyPronunciation(input: string, rules: readonly PronunciationRule[], support: PhonemeSupport): Pronounced {
  const warnings: string[] = [];
  const active: number[] = [];
  rules.forEach((rule, i) => {
    if (rule.type === 'phoneme') {
      const why = unsupported(rule, support);
      if (why) {
        warnings.push(`phoneme rule ${quoted(rule)} skipped: ${why}`);
        return;
      }
    }
    active.push(i);
  });

  const candidates: Match[] = [];
  for (const i of active) {
    const rule = rules[i]!;
    for (const m of input.matchAll(matcher(rule))) {
      if (m[0].length === 0) continue;
      candidates.push({ start: m.index!, end: m.index! + m[0].length, rule: i, length: rule.string_to_replace.length });
    }
  }
  // Longest rule first, then the earliest match, then the earliest rule; a match overlapping one already taken loses.
  candidates.sort((a, b) => b.length - a.length || a.start - b.start || a.rule - b.rule);
  const taken: Match[] = [];
  for (const c of candidates) if (!taken.some((t) => c.start < t.end && t.start < c.end)) taken.push(c);
  taken.sort((a, b) => a.start - b.start);

  const markup = taken.some((t) => rules[t.rule]!.type === 'phoneme');
  const plain = markup ? escapeText : (s: string) => s;
  let text = '';
  let spoken = '';
  let at = 0;
  for (const t of taken) {
    const between = input.slice(at, t.start);
    text += plain(between);
    spoken += between;
    const rule = rules[t.rule]!;
    const original = input.slice(t.start, t.end);
    if (rule.type === 'alias') {
      text += plain(rule.alias ?? '');
      spoken += rule.alias ?? '';
    } else {
      text += `<phoneme alphabet="${escapeAttr(rule.alphabet ?? 'ipa')}" ph="${escapeAttr(rule.phoneme ?? rule.ph ?? '')}">${escapeText(original)}</phoneme>`;
      spoken += original;
    }
    at = t.end;
  }
  text += plain(input.slice(at));
  spoken += input.slice(at);
  return { text, spoken, warnings };
}
