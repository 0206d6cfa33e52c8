// The most input tokens Anthropic bills for one image (docs.anthropic.com, "Vision": "Evaluate
// image size"): about width × height / 750, after an image whose long edge is over 1,568 px is
// scaled down to it. Anthropic also scales down images over ~1.15 megapixels (~1,600 tokens), but
// its own table lists sizes it does not scale that come to ~1,640 tokens, so that cap is not relied
// on: at most 1,568² / 750, 3,279 tokens.
import type { ImageTokenRule } from '../manifest.ts';

const LONG_EDGE = 1568;
const PIXELS_PER_TOKEN = 750;

export const anthropicImageTokens: ImageTokenRule = (size) => {
  const { w, h } = size ?? { w: LONG_EDGE, h: LONG_EDGE };
  const s = Math.min(1, LONG_EDGE / Math.max(w, h));
  return Math.ceil((w * s * h * s) / PIXELS_PER_TOKEN);
};
