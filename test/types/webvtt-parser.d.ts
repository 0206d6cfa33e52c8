// webvtt-parser (the W3C's WebVTT parser) ships no types; the test reads its cues and errors.
declare module 'webvtt-parser' {
  export class WebVTTParser {
    parse(input: string, mode?: 'subtitles' | 'chapters' | 'metadata'): { cues: { startTime: number; endTime: number; text: string }[]; errors: unknown[] };
  }
}
