// The most input tokens Gemini bills for one image (ai.google.dev, "Image understanding" and
// "Media resolution"), the larger of its two rules:
//
// - Gemini 2.x: 258 tokens when both sides are at most 384 px; otherwise the image (scaled down to
//   fit 3072×3072) is cut into square tiles of 258 tokens each. The tile's side is taken as the
//   shorter side / 1.5, between 256 and 768 px (what Google's token counts follow; the guide says
//   768×768 tiles, which never gives more): at most 24 tiles, 6,192 tokens, for a long thin image.
// - Gemini 3: a fixed count per image by `media_resolution`, 1,120 at high (the default for images).
//   An ultra-high setting per part is taken to double it: 2,240. (Not verified against a
//   published table.)
import type { Dimensions } from '../../media/geometry.ts';
import type { ImageTokenRule } from '../manifest.ts';

const TILE_TOKENS = 258;
const SMALL = 384;
const MAX_SIDE = 3072;
const PER_IMAGE_MAX = 2240;

/** Gemini 2.x's tokens for an image of this size. */
export function geminiTileTokens({ w, h }: Dimensions): number {
  if (w <= SMALL && h <= SMALL) return TILE_TOKENS;
  const s = Math.min(1, MAX_SIDE / Math.max(w, h));
  const [sw, sh] = [w * s, h * s];
  const unit = Math.min(768, Math.max(256, Math.floor(Math.min(sw, sh) / 1.5)));
  return Math.ceil(sw / unit) * Math.ceil(sh / unit) * TILE_TOKENS;
}

/** The most over every size: a long side of 3072 px, the short side whichever gives the most tiles. */
let mostTiles = 0;
for (let side = 1; side <= MAX_SIDE; side++) mostTiles = Math.max(mostTiles, geminiTileTokens({ w: MAX_SIDE, h: side }));
export const GEMINI_MOST_IMAGE_TOKENS = Math.max(mostTiles, PER_IMAGE_MAX);

export const geminiImageTokens: ImageTokenRule = (size) => (size ? Math.max(geminiTileTokens(size), PER_IMAGE_MAX) : GEMINI_MOST_IMAGE_TOKENS);
