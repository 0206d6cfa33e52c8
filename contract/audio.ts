import { z } from 'zod';
import { modelId } from './common.ts';

export const PronunciationRule = z
  .object({
    string_to_replace: z.string().min(1).max(200),
    type: z.enum(['alias', 'phoneme']),
    alias: z.string().optional().describe('Required for type alias.'),
    phoneme: z.string().min(1).optional().describe('Required for type phoneme; `ph` is accepted as an alias of this field.'),
    ph: z.string().min(1).optional().describe('Alias of `phoneme`.'),
    alphabet: z.enum(['ipa', 'cmu-arpabet']).optional().describe('Required for type phoneme.'),
    case_sensitive: z.boolean().default(true),
    word_boundaries: z.boolean().default(true),
  })
  .superRefine((rule, ctx) => {
    if (rule.type === 'alias' && rule.alias === undefined) {
      ctx.addIssue({ code: 'custom', path: ['alias'], message: 'alias rules need `alias`' });
    }
    if (rule.type === 'phoneme') {
      if (rule.phoneme === undefined && rule.ph === undefined) {
        ctx.addIssue({ code: 'custom', path: ['phoneme'], message: 'phoneme rules need `phoneme` (or `ph`)' });
      }
      if (rule.alphabet === undefined) {
        ctx.addIssue({ code: 'custom', path: ['alphabet'], message: 'phoneme rules need `alphabet` (ipa or cmu-arpabet)' });
      }
    }
  })
  .meta({ id: 'PronunciationRule' });

export const SpeechRequest = z
  .looseObject({
    model: modelId,
    input: z.string().min(1).describe('Text; at most 4096 characters for family B (after phoneme tags are expanded).'),
    voice: z.string().min(1).describe("One of the voices of the model's family: a voice name such as `alloy` (A), a voice id (B), a prebuilt voice name (C)."),
    speed: z.number().min(0.25).max(4).optional().describe('Family A only.'),
    response_format: z.enum(['mp3', 'opus', 'aac', 'flac']).optional().describe('Family A only.'),
    stability: z.number().min(0).max(1).optional().describe('Family B only; default 0.5.'),
    similarity_boost: z.number().min(0).max(1).optional().describe('Family B only; default 0.5.'),
    'with-timestamps': z.boolean().optional().describe('Family B only: JSON with per-character timestamps instead of raw audio.'),
    pronunciation_dictionary: z.array(PronunciationRule).max(100).optional(),
  })
  .meta({
    id: 'SpeechRequest',
    description:
      'Speech models come in three families, by their provider: A, OpenAI-format models (e.g. `tts-1`); B, ElevenLabs models (e.g. `eleven_flash_v2`); ' +
      'C, Gemini speech models (e.g. `gemini-2.5-flash-preview-tts`). Fields marked for one family are ignored by the others.',
  });

const CharacterAlignment = z
  .object({
    characters: z.array(z.string()),
    character_start_times_seconds: z.array(z.number()),
    character_end_times_seconds: z.array(z.number()),
  })
  .meta({ id: 'CharacterAlignment', description: 'Three equal-length arrays, one entry per character (spaces included), in seconds.' });

export const SpeechWithTimestamps = z
  .object({
    audio_base64: z.string(),
    alignment: CharacterAlignment.nullable(),
    normalized_alignment: CharacterAlignment.nullable(),
    pronunciation_warnings: z.array(z.string()),
  })
  .meta({ id: 'SpeechWithTimestamps' });

export const TranscriptionRequest = z
  .looseObject({
    model: modelId.describe('A transcription model of the catalog, e.g. `whisper-1` (OpenAI) or `scribe_v2` (ElevenLabs).'),
    file: z.unknown().meta({ type: 'string', format: 'binary' }).describe('Audio file, at most 25 MB: mp3, mp4, mpeg, mpga, m4a, wav, webm.'),
    language: z.string().regex(/^[a-z]{2}$/, { message: 'must be an ISO-639-1 code such as en' }).optional(),
    prompt: z.string().optional(),
    temperature: z.coerce.number().min(0).max(1).optional(),
    response_format: z.enum(['json', 'text', 'srt', 'vtt', 'verbose_json']).optional(),
    timestamp_granularities: z
      .array(z.enum(['word', 'segment']))
      .optional()
      .describe('Requires response_format verbose_json. Sent as repeated `timestamp_granularities[]` form fields.'),
  })
  .meta({ id: 'TranscriptionRequest' });

export const Transcription = z
  .looseObject({
    text: z.string(),
    usage: z.looseObject({ type: z.string() }).optional(),
  })
  .meta({ id: 'Transcription', description: 'response_format json.' });

export const TranscriptionVerbose = z
  .looseObject({
    task: z.literal('transcribe'),
    language: z.string(),
    duration: z.number(),
    text: z.string(),
    segments: z
      .array(z.looseObject({ id: z.number().int(), start: z.number(), end: z.number(), text: z.string() }))
      .optional(),
    words: z.array(z.looseObject({ word: z.string(), start: z.number(), end: z.number() })).optional(),
    timing: z.literal('estimated').optional().describe('Present when the upstream gave no timestamps and the segments were laid over the audio by the gateway.'),
  })
  .meta({ id: 'TranscriptionVerbose', description: 'response_format verbose_json.' });
