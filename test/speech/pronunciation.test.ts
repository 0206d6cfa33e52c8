// The pronunciation rules engine (docs/api.md, "Speech": pronunciation rules 1–7): table tests of each rule and of the
// decided edge cases, and properties (fast-check) that must hold for any text and rules.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyPronunciation, type PhonemeSupport, type PronunciationRule } from '../../server/speech/pronunciation.ts';

const FLASH: PhonemeSupport = { model: 'eleven_flash_v2', alphabets: ['ipa', 'cmu-arpabet'] };
const V3: PhonemeSupport = { model: 'eleven_v3', alphabets: ['ipa'] };
const TTS1: PhonemeSupport = { model: 'tts-1', alphabets: [] };

const alias = (s: string, a: string, extra: Partial<PronunciationRule> = {}): PronunciationRule => ({ string_to_replace: s, type: 'alias', alias: a, ...extra });
const phoneme = (s: string, p: string, alphabet: 'ipa' | 'cmu-arpabet' = 'ipa', extra: Partial<PronunciationRule> = {}): PronunciationRule => ({ string_to_replace: s, type: 'phoneme', phoneme: p, alphabet, ...extra });

describe('rules', () => {
  it('1–2: aliases are applied to the text on every model', () => {
    for (const support of [FLASH, V3, TTS1]) {
      expect(applyPronunciation('Read the SQL docs.', [alias('SQL', 'sequel')], support)).toEqual({ text: 'Read the sequel docs.', spoken: 'Read the sequel docs.', warnings: [] });
    }
  });

  it('3: phoneme rules become inline tags on flash/turbo v2 (both alphabets) and v3 (ipa)', () => {
    expect(applyPronunciation('A tomato.', [phoneme('tomato', 'təˈmeɪtoʊ')], FLASH).text).toBe('A <phoneme alphabet="ipa" ph="təˈmeɪtoʊ">tomato</phoneme>.');
    expect(applyPronunciation('Madison', [phoneme('Madison', 'M AE1 D IH0 S AH0 N', 'cmu-arpabet')], FLASH).text).toBe('<phoneme alphabet="cmu-arpabet" ph="M AE1 D IH0 S AH0 N">Madison</phoneme>');
    expect(applyPronunciation('A tomato.', [phoneme('tomato', 'təˈmeɪtoʊ')], V3)).toEqual({ text: 'A <phoneme alphabet="ipa" ph="təˈmeɪtoʊ">tomato</phoneme>.', spoken: 'A tomato.', warnings: [] });
    // `ph` is accepted for `phoneme`.
    expect(applyPronunciation('tomato', [{ string_to_replace: 'tomato', type: 'phoneme', ph: 'x', alphabet: 'ipa' }], FLASH).text).toBe('<phoneme alphabet="ipa" ph="x">tomato</phoneme>');
  });

  it('4: elsewhere phoneme rules are skipped with a warning naming them and why; aliases still apply', () => {
    expect(applyPronunciation('A tomato and SQL.', [phoneme('tomato', 'təˈmeɪtoʊ'), alias('SQL', 'sequel')], TTS1)).toEqual({
      text: 'A tomato and sequel.',
      spoken: 'A tomato and sequel.',
      warnings: ['phoneme rule "tomato" skipped: model tts-1 does not support phoneme tags; the word is read as written'],
    });
    expect(applyPronunciation('Madison', [phoneme('Madison', 'M AE1 D', 'cmu-arpabet')], V3)).toEqual({
      text: 'Madison',
      spoken: 'Madison',
      warnings: ['phoneme rule "Madison" skipped: model eleven_v3 supports only ipa phonemes, not cmu-arpabet; the word is read as written'],
    });
    // A skipped phoneme rule takes no part: an alias on the same word applies.
    expect(applyPronunciation('Madison', [phoneme('Madison', 'M AE1 D', 'cmu-arpabet'), alias('Madison', 'Maddie')], V3).text).toBe('Maddie');
  });

  it('5: the longer string_to_replace wins an overlap; produced text is never matched again', () => {
    const rules = [alias('New', 'Old'), alias('New York', 'NYC'), alias('York', 'Yorkshire')];
    expect(applyPronunciation('New York and New Jersey, York.', rules, TTS1).text).toBe('NYC and Old Jersey, Yorkshire.');
    // cat→dog and dog→cat swap, they do not chain.
    expect(applyPronunciation('cat dog', [alias('cat', 'dog'), alias('dog', 'cat')], TTS1).text).toBe('dog cat');
    // An alias containing its own word is not expanded again.
    expect(applyPronunciation('AI', [alias('AI', 'A I (AI)')], TTS1).text).toBe('A I (AI)');
    // Equal lengths: the earlier match, then the earlier rule.
    expect(applyPronunciation('abcd', [alias('bcd', 'X', { word_boundaries: false }), alias('abc', 'Y', { word_boundaries: false })], TTS1).text).toBe('Yd');
  });

  it('6: tags count toward the length sent (the 4096 cap is checked on `text`), not toward what is spoken', () => {
    const r = applyPronunciation('tomato '.repeat(3).trim(), [phoneme('tomato', 'təˈmeɪtoʊ')], FLASH);
    expect(r.text.length).toBe(3 * '<phoneme alphabet="ipa" ph="təˈmeɪtoʊ">tomato</phoneme>'.length + 2);
    expect(r.spoken).toBe('tomato tomato tomato');
  });

  it('7: case_sensitive (default true) and word_boundaries (default true), Unicode-aware', () => {
    expect(applyPronunciation('Nginx nginx NGINX', [alias('nginx', 'engine x')], TTS1).text).toBe('Nginx engine x NGINX');
    expect(applyPronunciation('Nginx nginx NGINX', [alias('nginx', 'engine x', { case_sensitive: false })], TTS1).text).toBe('engine x engine x engine x');
    expect(applyPronunciation('cat category bobcat cat.', [alias('cat', 'feline')], TTS1).text).toBe('feline category bobcat feline.');
    expect(applyPronunciation('bobcat', [alias('cat', 'feline', { word_boundaries: false })], TTS1).text).toBe('bobfeline');
    // Non-ASCII letters are word characters: no match inside "catégorie" or "écat", a match before "!" or "—".
    expect(applyPronunciation('catégorie écat cat! cat—x', [alias('cat', 'chat')], TTS1).text).toBe('catégorie écat chat! chat—x');
    expect(applyPronunciation('Straße und Strasse', [alias('Straße', 'Strasse')], TTS1).text).toBe('Strasse und Strasse');
    expect(applyPronunciation('日本 日本語', [alias('日本', 'Nippon')], TTS1).text).toBe('Nippon 日本語');
    // An edge that is not a word character needs no boundary on that side.
    expect(applyPronunciation('C++ and C++x', [alias('C++', 'C plus plus')], TTS1).text).toBe('C plus plus and C plus plusx');
  });

  it('markup cannot be injected: text and attributes are escaped once a tag is produced; plain text stays plain', () => {
    const r = applyPronunciation('1 < 2 & <b>tomato</b>', [phoneme('tomato', 'tə"><x y="')], FLASH);
    expect(r.text).toBe('1 &lt; 2 &amp; &lt;b&gt;<phoneme alphabet="ipa" ph="tə&quot;&gt;&lt;x y=&quot;">tomato</phoneme>&lt;/b&gt;');
    expect(r.spoken).toBe('1 < 2 & <b>tomato</b>');
    expect(applyPronunciation('1 < 2 & SQL', [alias('SQL', 'a<b')], TTS1).text).toBe('1 < 2 & a<b');
    // An alias beside a tag is escaped like the text around it.
    expect(applyPronunciation('SQL tomato', [alias('SQL', 'a<b'), phoneme('tomato', 't')], FLASH).text).toBe('a&lt;b <phoneme alphabet="ipa" ph="t">tomato</phoneme>');
  });

  it('edge cases: an empty alias deletes, a multi-word phoneme rule is skipped, a rule matching nothing says nothing', () => {
    expect(applyPronunciation('um, hello', [alias('um,', '')], TTS1).text).toBe(' hello');
    expect(applyPronunciation('New York', [phoneme('New York', 'nuː jɔːk')], FLASH)).toEqual({
      text: 'New York',
      spoken: 'New York',
      warnings: ['phoneme rule "New York" skipped: a phoneme tag takes one word on eleven_flash_v2; the phrase is read as written'],
    });
    expect(applyPronunciation('hello', [alias('absent', 'x'), phoneme('absent', 'y')], FLASH)).toEqual({ text: 'hello', spoken: 'hello', warnings: [] });
  });
});

describe('properties', () => {
  const word = fc.stringMatching(/^[a-z]{1,6}$/);
  const text = fc.array(fc.oneof(word, fc.constantFrom(' ', ', ', '. ')), { maxLength: 30 }).map((p) => p.join(''));

  it('aliases that map a word to itself change nothing (idempotent)', () => {
    fc.assert(fc.property(text, fc.array(word, { maxLength: 5 }), (t, ws) => applyPronunciation(t, ws.map((w) => alias(w, w)), TTS1).text === t));
  });

  it('produced text is never matched again: each original match is replaced once, whatever the aliases contain', () => {
    fc.assert(
      fc.property(text, word, word, (t, w, extra) => {
        const r = applyPronunciation(t, [alias(w, `${w} ${extra} ${w}`)], TTS1);
        const count = [...t.matchAll(new RegExp(`(?<![a-z])${w}(?![a-z])`, 'g'))].length;
        // Replaced once each: the output is the original with every match tripled around `extra`.
        return r.text === t.replace(new RegExp(`(?<![a-z])${w}(?![a-z])`, 'g'), `${w} ${extra} ${w}`) && r.text.length === t.length + count * (w.length + extra.length + 2);
      }),
    );
  });

  it('the longest rule wins wherever two overlap', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('new', 'york', 'new york', 'old'), { maxLength: 12 }), (parts) => {
        const t = parts.join(' ');
        const r = applyPronunciation(t, [alias('new', 'N'), alias('new york', 'NY')], TTS1);
        const expected = t.replace(/(?<![a-z])new york(?![a-z])/g, 'NY').replace(/(?<![a-z])new(?![a-z])/g, 'N');
        return r.text === expected;
      }),
    );
  });

  it('the spoken text never contains markup the rules made, and tags appear only where phonemes are supported', () => {
    fc.assert(
      fc.property(text, word, (t, w) => {
        const rules = [phoneme(w, 'ph')];
        const on = applyPronunciation(t, rules, FLASH);
        const off = applyPronunciation(t, rules, TTS1);
        return on.spoken === t && off.text === t && off.spoken === t && !on.spoken.includes('<phoneme');
      }),
    );
  });
});
