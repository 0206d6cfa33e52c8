// ElevenLabs' wire, as the gateway reads it: Scribe's transcription and text to speech with
// timestamps (the streamed MP3 is read as bytes). Fields are optional where ElevenLabs may leave
// them out. Types only; test/mappings/wire-schemas.ts holds the transcription as a zod schema,
// checked against the recorded answers in test/fixtures/recorded/upstreams/.
import type { z } from 'zod';
import type { SpeechWithTimestamps } from '../../../contract/audio.ts';

/** `POST /speech-to-text`: spaces and audio events are entries of their own beside the words. */
export type Transcription = {
  text?: string;
  language_code?: string;
  words?: Word[];
};

export type Word = { text: string; type: 'word' | 'spacing' | 'audio_event'; start?: number | null; end?: number | null };

type Alignment = z.infer<typeof SpeechWithTimestamps>['alignment'];

/** `POST /text-to-speech/{voice_id}/with-timestamps`: the gateway passes the alignment on as it is. */
export type SpeechWithTimestampsAnswer = { audio_base64?: string; alignment?: Alignment; normalized_alignment?: Alignment };
