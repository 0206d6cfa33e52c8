-- Health samples per key of a provider's pool (issue 35): '' for a provider without a pool, so
-- every existing row keeps its meaning.
ALTER TABLE "model_health_samples" ADD COLUMN "key_label" TEXT NOT NULL DEFAULT '';

DROP INDEX "model_health_samples_model_provider_bucket_start_key";

CREATE UNIQUE INDEX "model_health_samples_model_provider_key_label_bucket_start_key" ON "model_health_samples"("model", "provider", "key_label", "bucket_start");
