// The transcription capability's adapter types: the uploaded audio (opened once per attempt, never
// held whole) and the client's options in, a transcript with whatever timing the upstream gives out.
import type { Readable } from 'node:stream';
import type * as C from '../translate/canonical.ts';
import type { Transcript } from '../transcription/transcript.ts';
import type { Adapter } from './adapter.ts';

export type AudioFile = { open(): Readable; size: number; filename: string; mediaType: string };

export type TranscriptionInput = {
  file: AudioFile;
  language: string | null;
  prompt: string | null;
  temperature: number | null;
};

export type TranscriptionOutput = {
  transcript: Transcript;
  /** Token usage the upstream reported (gpt-4o-transcribe), billed instead of the minutes. */
  usage: C.Usage | null;
  /** Seconds of audio the upstream reported (whisper-1's usage), else null. */
  reportedSeconds: number | null;
  /** The upstream's usage object, passed on in json and verbose_json. */
  usageBody?: Record<string, unknown>;
};

export type TranscriptionAdapter = Adapter<TranscriptionInput, TranscriptionOutput>;
