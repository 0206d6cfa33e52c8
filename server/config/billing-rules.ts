// How work that is not counted in tokens is counted against the daily token quota. Each model's
// endpoint has one unit; the model's rule (config `billing`, else the default here) says how many
// tokens one unit is worth, before the model's token_multiplier (docs/decisions/0012).
import { CAPABILITIES, type BilledUnit, type Capability } from './capabilities.ts';

export type MeteredUnit = Exclude<BilledUnit, 'token'>;

/** The config's rule names (per the unit an operator thinks in) and the unit each counts. */
export const RULES = {
  tokens_per_image: 'image',
  tokens_per_video_second: 'video_second',
  tokens_per_1k_characters: 'character',
  tokens_per_audio_minute: 'audio_minute',
} as const satisfies Record<string, MeteredUnit>;
export type RuleName = keyof typeof RULES;
export type BillingRules = Partial<Record<RuleName, number>>;

/**
 * Defaults, in tokens of a mid-priced text model: an image ≈ a gpt-image-1 medium square (1,056
 * output tokens), a second of video ≈ ten images, speech ≈ the characters read as text (4 per
 * token), a minute of audio ≈ what OpenAI's transcription models report for it. Operators tune
 * them per model (config `billing`) and weight them with `token_multiplier`.
 */
export const DEFAULT_RULES: Required<BillingRules> = {
  tokens_per_image: 1000,
  tokens_per_video_second: 10_000,
  tokens_per_1k_characters: 250,
  tokens_per_audio_minute: 1000,
};

const ruleOfUnit: Record<MeteredUnit, RuleName> = { image: 'tokens_per_image', video_second: 'tokens_per_video_second', character: 'tokens_per_1k_characters', audio_minute: 'tokens_per_audio_minute' };
/** Units per rule quantity: the character rule is per thousand. */
const perRule: Record<MeteredUnit, number> = { image: 1, video_second: 1, character: 1000, audio_minute: 1 };

/** The unit each capability is billed in (the capability table's). */
export const ENDPOINT_UNITS = Object.fromEntries(Object.entries(CAPABILITIES).map(([c, row]) => [c, row.unit])) as Record<Capability, BilledUnit>;

export const unitOf = (endpoint: Capability): BilledUnit => ENDPOINT_UNITS[endpoint];
/** The endpoints billed by `unit`, for messages. */
export const endpointsOfUnit = (unit: BilledUnit) => Object.entries(ENDPOINT_UNITS).filter(([, u]) => u === unit).map(([e]) => e).join('/');

/** Tokens one unit is worth for this model (1 for token-billed models). */
export function tokensPerUnit(model: { endpoint: Capability; billing?: BillingRules | null }): number {
  const unit = unitOf(model.endpoint);
  if (unit === 'token') return 1;
  const rule = ruleOfUnit[unit];
  return (model.billing?.[rule] ?? DEFAULT_RULES[rule]) / perRule[unit];
}

/** Tokens (before the multiplier) for `quantity` units of this model's work, rounded up. */
export function unitTokens(model: { endpoint: Capability; billing?: BillingRules | null }, unit: MeteredUnit, quantity: number): number {
  const rule = ruleOfUnit[unit];
  return Math.ceil(((model.billing?.[rule] ?? DEFAULT_RULES[rule]) * quantity) / perRule[unit]);
}
