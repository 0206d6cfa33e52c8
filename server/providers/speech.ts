// The speech capability's adapter types: the text to read (pronunciation rules applied) and the
// resolved voice in, audio out — streamed as it arrives where the upstream streams (OpenAI,
// ElevenLabs), whole where it answers in one piece (Gemini), or ElevenLabs' timestamps JSON.
import type { Readable } from 'node:stream';
import type { z } from 'zod';
import type { SpeechRequest, SpeechWithTimestamps } from '../../contract/audio.ts';
import type { Adapter } from './adapter.ts';

export type SpeechInput = {
  /** The client's body (its family-specific fields read by the adapter of that family). */
  body: z.infer<typeof SpeechRequest>;
  /** The text to send: pronunciation rules applied, phoneme tags inline where supported. */
  text: string;
  /** The voice as the upstream names it (an ElevenLabs voice id, a Gemini voice name). */
  voice: string;
};

export type SpeechAudio = { kind: 'audio'; contentType: string; body: Readable; length: number | null };
export type SpeechTimestamps = { kind: 'timestamps'; json: Omit<z.infer<typeof SpeechWithTimestamps>, 'pronunciation_warnings'> };

export type SpeechAdapter = Adapter<SpeechInput, SpeechAudio | SpeechTimestamps>;

/** The request fields the gateway reads itself; any other field is the client's to pass on (spec: unknown fields pass through). */
const KNOWN = new Set(['model', 'input', 'voice', 'speed', 'response_format', 'stability', 'similarity_boost', 'with-timestamps', 'pronunciation_dictionary']);
export const extraFields = (body: SpeechInput['body']): Record<string, unknown> => Object.fromEntries(Object.entries(body).filter(([k]) => !KNOWN.has(k)));
