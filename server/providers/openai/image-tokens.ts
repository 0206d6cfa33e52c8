// The most input tokens OpenAI's text models bill for one image (platform.openai.com/docs/guides/images-vision,
// "Calculating costs"), the largest over its models, so a hold sized by it is never short:
//
// - Tile models (gpt-4o, gpt-4.1, gpt-4.5, o1, o3, gpt-5, computer-use): the image is scaled down to
//   fit 2048×2048, then down until its shortest side is at most 768 px; each 512-px tile costs `tile`
//   tokens, plus `base` once; `detail: low` costs `base` alone. gpt-4o-mini's constants are the
//   largest (base 2,833, tile 5,667, against gpt-4o's 85 and 170): its image tokens are priced
//   lower to cost about what gpt-4o's do, but they are what its usage reports and what a token
//   quota counts. At most 8 tiles (768×2048): 2,833 + 8 × 5,667 = 48,169 tokens.
// - Patch models (gpt-4.1-mini, gpt-4.1-nano, o4-mini, gpt-5-mini, gpt-5-nano): one token per
//   32-px patch, at most 1,536 patches (larger images are scaled down to fit them), times the
//   model's multiplier, 2.46 at most (the nano models): at most 3,779 tokens. Whether
//   `detail: low` lowers them is not documented, so it is taken not to.
//
// Images are taken never to be scaled up (the guide's examples scale down only).
import type { Dimensions } from '../../media/geometry.ts';
import type { ImageTokenRule } from '../manifest.ts';

const TILE_BASE = 2833;
const TILE = 5667;
const PATCH = 32;
const PATCH_CAP = 1536;
const PATCH_MULTIPLIER = 2.46;

/** 512-px tiles of an image scaled down to fit 2048×2048 and then to a shortest side of 768. */
export function openAiTiles({ w, h }: Dimensions): number {
  const fit = Math.min(1, 2048 / Math.max(w, h));
  const shortest = Math.min(1, 768 / (Math.min(w, h) * fit));
  const s = fit * shortest;
  return Math.ceil((w * s) / 512) * Math.ceil((h * s) / 512);
}

/** 32-px patches of an image, at most 1,536. */
export const openAiPatches = ({ w, h }: Dimensions): number => Math.min(PATCH_CAP, Math.ceil(w / PATCH) * Math.ceil(h / PATCH));

export const openAiImageTokens: ImageTokenRule = (size, detail) => {
  const tiles = detail === 'low' ? 0 : size ? openAiTiles(size) : 8;
  const patches = size ? openAiPatches(size) : PATCH_CAP;
  return Math.max(TILE_BASE + TILE * tiles, Math.ceil(patches * PATCH_MULTIPLIER));
};
