-- Usage buckets and cost (issue 34, decision 0027). On the partitioned ledger the columns reach
-- every partition; a constant default is stored once, so no row is rewritten.
ALTER TABLE "usage_records"
  ADD COLUMN "cache_write_tokens" INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN "cache_write_1h_tokens" INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN "audio_input_tokens" INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN "image_input_tokens" INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN "audio_output_tokens" INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN "image_output_tokens" INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN "web_search_calls" INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN "cost" DECIMAL;

-- Rows written before prices were known have no cost: counted as unpriced in their days' sums.
ALTER TABLE "usage_daily"
  ADD COLUMN "cache_write_tokens" BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN "cache_write_1h_tokens" BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN "audio_input_tokens" BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN "image_input_tokens" BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN "audio_output_tokens" BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN "image_output_tokens" BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN "web_search_calls" BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN "cost" DECIMAL NOT NULL DEFAULT 0,
  ADD COLUMN "unpriced_requests" INTEGER NOT NULL DEFAULT 0;

UPDATE "usage_daily" SET "unpriced_requests" = "requests";
