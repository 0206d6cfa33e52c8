-- Issue 33 (docs/decisions/0026-usage-aggregates-and-partitions.md): the ledger's raw rows move into
-- a table partitioned by UTC day of created_at (dropped a day at a time past ledger.retention_days),
-- and every usage read moves to usage_daily, kept up to date in the same statement that writes the
-- raw rows. This migration builds usage_daily for the rows already there.

-- The old table, out of the way (its constraint and index names are the new table's).
ALTER TABLE "usage_records" RENAME TO "usage_records_unpartitioned";
ALTER TABLE "usage_records_unpartitioned" RENAME CONSTRAINT "usage_records_pkey" TO "usage_records_unpartitioned_pkey";
DROP INDEX "usage_records_api_key_id_created_at_idx";
DROP INDEX "usage_records_created_at_idx";

-- No index but the key: no read scans raw rows any more (the rebuild reads whole days, which are
-- whole partitions), and the key makes batched, retried and replayed writes idempotent. A
-- partitioned table's unique key must hold the partition column; a record keeps its created_at
-- through every retry and replay, so (request_id, created_at) is as unique as request_id was.
CREATE TABLE "usage_records" (
    "request_id" TEXT NOT NULL,
    "api_key_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "oauth_app_id" TEXT,
    "model" TEXT NOT NULL,
    "provider" TEXT,
    "upstream_model" TEXT,
    "endpoint" TEXT NOT NULL,
    "prompt_tokens" INTEGER NOT NULL DEFAULT 0,
    "completion_tokens" INTEGER NOT NULL DEFAULT 0,
    "cached_tokens" INTEGER NOT NULL DEFAULT 0,
    "reasoning_tokens" INTEGER NOT NULL DEFAULT 0,
    "surcharge_tokens" INTEGER NOT NULL DEFAULT 0,
    "metered_unit" TEXT,
    "metered_quantity" DOUBLE PRECISION,
    "multiplier" DOUBLE PRECISION NOT NULL DEFAULT 1,
    "billed_tokens" BIGINT NOT NULL,
    "usage_source" TEXT NOT NULL,
    "status" INTEGER NOT NULL,
    "error_code" TEXT,
    "latency_ms" INTEGER,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "usage_records_pkey" PRIMARY KEY ("request_id", "created_at")
) PARTITION BY RANGE ("created_at");

-- Rows of a day with no partition yet (a replayed record older than the oldest partition, a clock
-- far ahead) land here instead of failing their batch; the maintenance moves them into their day's
-- partition when it creates it (server/billing/ledger-partitions.ts).
CREATE TABLE "usage_records_default" PARTITION OF "usage_records" DEFAULT;

-- A partition for each day that has rows, so they are copied straight to where they belong.
DO $$
DECLARE d date;
BEGIN
  FOR d IN SELECT DISTINCT (created_at::date) FROM "usage_records_unpartitioned" ORDER BY 1 LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF "usage_records" FOR VALUES FROM (%L) TO (%L)',
                   'usage_records_p' || to_char(d, 'YYYYMMDD'), d, d + 1);
  END LOOP;
END $$;

INSERT INTO "usage_records" SELECT
    "request_id", "api_key_id", "user_id", "oauth_app_id", "model", "provider", "upstream_model", "endpoint",
    "prompt_tokens", "completion_tokens", "cached_tokens", "reasoning_tokens", "surcharge_tokens",
    "metered_unit", "metered_quantity", "multiplier", "billed_tokens", "usage_source", "status",
    "error_code", "latency_ms", "created_at"
FROM "usage_records_unpartitioned";

DROP TABLE "usage_records_unpartitioned";

-- Per API key, UTC day and model: what every usage read reads.
CREATE TABLE "usage_daily" (
    "api_key_id" TEXT NOT NULL,
    "day" DATE NOT NULL,
    "model" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "requests" INTEGER NOT NULL DEFAULT 0,
    "errors" INTEGER NOT NULL DEFAULT 0,
    "prompt_tokens" BIGINT NOT NULL DEFAULT 0,
    "completion_tokens" BIGINT NOT NULL DEFAULT 0,
    "cached_tokens" BIGINT NOT NULL DEFAULT 0,
    "reasoning_tokens" BIGINT NOT NULL DEFAULT 0,
    "surcharge_tokens" BIGINT NOT NULL DEFAULT 0,
    "billed_tokens" BIGINT NOT NULL DEFAULT 0,
    "metered_unit" TEXT,
    "metered_quantity" DOUBLE PRECISION NOT NULL DEFAULT 0,

    CONSTRAINT "usage_daily_pkey" PRIMARY KEY ("api_key_id", "day", "model", "user_id")
);

-- GET /admin/v1/usage: a period across every key. (GET /v1/usage reads by the key first: the primary key.)
CREATE INDEX "usage_daily_day_idx" ON "usage_daily"("day");

INSERT INTO "usage_daily" SELECT
    "api_key_id", "created_at"::date, "model", "user_id",
    count(*), count(*) FILTER (WHERE "status" >= 400),
    sum("prompt_tokens"), sum("completion_tokens"), sum("cached_tokens"), sum("reasoning_tokens"), sum("surcharge_tokens"),
    sum("billed_tokens"), max("metered_unit"), coalesce(sum("metered_quantity") FILTER (WHERE "metered_unit" IS NOT NULL), 0)
FROM "usage_records"
GROUP BY 1, 2, 3, 4;
