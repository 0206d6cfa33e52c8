/** The bucket counts of a usage report's totals when no request used them. */
export const NO_BUCKETS = {
  cache_write_tokens: 0,
  cache_write_1h_tokens: 0,
  audio_input_tokens: 0,
  image_input_tokens: 0,
  audio_output_tokens: 0,
  image_output_tokens: 0,
  web_search_calls: 0,
};
