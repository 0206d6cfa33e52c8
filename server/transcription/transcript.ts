// A transcript as every upstream gives it, in one shape, and the subtitle cues made from it.
// Cues are built by the gateway for every model (docs/transcription.md):
//   - from words when the upstream timed them (whisper-1, Scribe): a cue ends after a sentence end
//     (. ? ! …), before a pause of 0.8 s or more, or before it would pass 84 characters (two lines
//     of 42) or 7 seconds;
//   - from segments when only those are timed;
//   - otherwise estimated: the text split into sentences (then at the same 84-character limit),
//     the audio's real duration shared among them by their length. Never word-level times.

export type Word = { word: string; start: number; end: number };
export type Segment = { start: number; end: number; text: string };
export type Cue = { start: number; end: number; text: string };

export type Transcript = {
  text: string;
  /** The language as the upstream named it (ISO 639-1 or 639-3 code, or an English name), if it did. */
  language: string | null;
  /** Seconds of audio: the upstream's figure, else the container's. */
  duration: number;
  words: Word[] | null;
  segments: Segment[] | null;
};

export const CUE_MAX_CHARS = 84;
export const LINE_MAX_CHARS = 42;
export const CUE_MAX_SECONDS = 7;
export const PAUSE_SECONDS = 0.8;

const SENTENCE_END = /[.?!…。？！]["'”’)\]]*$/;

const joinWords = (words: readonly string[]) => words.join(' ').replace(/\s+([,.;:?!…])/g, '$1').trim();

/** Cues from timed words. */
export function cuesFromWords(words: readonly Word[]): Cue[] {
  const cues: Cue[] = [];
  let current: Word[] = [];
  const flush = () => {
    if (current.length) cues.push({ start: current[0]!.start, end: current[current.length - 1]!.end, text: joinWords(current.map((w) => w.word.trim())) });
    current = [];
  };
  for (const w of words) {
    if (!w.word.trim()) continue;
    if (current.length) {
      const last = current[current.length - 1]!;
      const longer = joinWords([...current.map((x) => x.word.trim()), w.word.trim()]);
      if (w.start - last.end >= PAUSE_SECONDS || longer.length > CUE_MAX_CHARS || w.end - current[0]!.start > CUE_MAX_SECONDS) flush();
    }
    current.push(w);
    if (SENTENCE_END.test(w.word.trim())) flush();
  }
  flush();
  return cues;
}

/** Sentences of `text` (Intl's sentence segmentation), each cut at word boundaries to at most `max` characters. */
export function sentences(text: string, max = CUE_MAX_CHARS): string[] {
  const out: string[] = [];
  const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });
  for (const { segment } of segmenter.segment(text)) {
    let s = segment.trim();
    while (s.length > max) {
      const cut = s.lastIndexOf(' ', max);
      const at = cut > 0 ? cut : max;
      out.push(s.slice(0, at).trim());
      s = s.slice(at).trim();
    }
    if (s) out.push(s);
  }
  return out;
}

/** Estimated cues: the text's sentences laid over the audio's duration in proportion to their length. */
export function estimatedCues(text: string, duration: number): Cue[] {
  const parts = sentences(text);
  const total = parts.reduce((n, p) => n + p.length, 0);
  if (!total || !(duration > 0)) return parts.map((p) => ({ start: 0, end: 0, text: p }));
  let at = 0;
  return parts.map((p) => {
    const start = at;
    at += (duration * p.length) / total;
    return { start: round3(start), end: round3(at), text: p };
  });
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

/** The transcript's cues and whether their times are the upstream's or estimated. */
export function cuesOf(t: Transcript): { cues: Cue[]; estimated: boolean } {
  if (t.words?.length) return { cues: cuesFromWords(t.words), estimated: false };
  if (t.segments?.length) return { cues: t.segments.map((s) => ({ start: s.start, end: s.end, text: s.text.trim() })), estimated: false };
  return { cues: estimatedCues(t.text, t.duration), estimated: true };
}

/** A cue's text in at most two lines of about 42 characters, broken at a space near the middle. */
export function wrap(text: string): string {
  if (text.length <= LINE_MAX_CHARS) return text;
  const middle = text.length / 2;
  let best = -1;
  for (let i = text.indexOf(' '); i !== -1; i = text.indexOf(' ', i + 1)) if (best === -1 || Math.abs(i - middle) < Math.abs(best - middle)) best = i;
  return best === -1 ? text : `${text.slice(0, best)}\n${text.slice(best + 1)}`;
}
