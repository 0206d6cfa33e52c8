// Every response format for every model, rendered by the gateway from the transcript (docs/api.md, "Transcription"):
// json, text, srt, vtt and verbose_json in OpenAI's shape (so the OpenAI SDK's types read it).
import { cuesOf, wrap, type Cue, type Transcript } from './transcript.ts';

export type ResponseFormat = 'json' | 'text' | 'srt' | 'vtt' | 'verbose_json';
export type Granularity = 'word' | 'segment';

export const CONTENT_TYPES: Record<ResponseFormat, string> = {
  json: 'application/json',
  verbose_json: 'application/json',
  text: 'text/plain; charset=utf-8',
  srt: 'application/x-subrip; charset=utf-8',
  vtt: 'text/vtt; charset=utf-8',
};

function clock(seconds: number, separator: ',' | '.'): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(h)}:${pad(m)}:${pad(s)}${separator}${pad(ms % 1000, 3)}`;
}

export const srt = (cues: readonly Cue[]) => cues.map((c, i) => `${i + 1}\n${clock(c.start, ',')} --> ${clock(c.end, ',')}\n${wrap(c.text)}\n`).join('\n');

// A cue's text cannot hold "-->" or a blank line in WebVTT; `&` and `<` would start markup.
const vttText = (s: string) => wrap(s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/-->/g, '->'));
export const vtt = (cues: readonly Cue[]) => `WEBVTT\n\n${cues.map((c) => `${clock(c.start, '.')} --> ${clock(c.end, '.')}\n${vttText(c.text)}\n`).join('\n')}`;

/** OpenAI names languages in English words in verbose_json ("english"). */
export function languageName(code: string | null): string {
  if (!code) return 'unknown';
  if (!/^[a-z]{2,3}$/i.test(code)) return code.toLowerCase();
  try {
    return (new Intl.DisplayNames(['en'], { type: 'language' }).of(code.toLowerCase()) ?? code).toLowerCase();
  } catch {
    return code.toLowerCase();
  }
}

export type Rendered = { body: string; contentType: string; estimated: boolean };

export function render(t: Transcript, format: ResponseFormat, granularities: readonly Granularity[] = ['segment'], usage?: Record<string, unknown>): Rendered {
  const { cues, estimated } = cuesOf(t);
  const contentType = CONTENT_TYPES[format];
  switch (format) {
    case 'text':
      return { body: `${t.text.trim()}\n`, contentType, estimated: false };
    case 'srt':
      return { body: srt(cues), contentType, estimated };
    case 'vtt':
      return { body: vtt(cues), contentType, estimated };
    case 'json':
      return { body: JSON.stringify({ text: t.text.trim(), ...(usage ? { usage } : {}) }), contentType, estimated: false };
    case 'verbose_json': {
      const body: Record<string, unknown> = { task: 'transcribe', language: languageName(t.language), duration: round2(t.duration), text: t.text.trim() };
      if (granularities.includes('segment')) {
        body.segments = cues.map((c, id) => ({ id, seek: 0, start: c.start, end: c.end, text: c.text, tokens: [], temperature: 0, avg_logprob: 0, compression_ratio: 0, no_speech_prob: 0 }));
      }
      // Word times only when the upstream gave them: never invented.
      if (granularities.includes('word') && t.words?.length) body.words = t.words.map((w) => ({ word: w.word.trim(), start: w.start, end: w.end }));
      if (estimated) body.timing = 'estimated';
      if (usage) body.usage = usage;
      return { body: JSON.stringify(body), contentType, estimated: estimated && granularities.includes('segment') };
    }
  }
}

const round2 = (n: number) => Math.round(n * 100) / 100;
