-- The request log (issue 36, docs/decisions/0030-request-log.md) and the per-key switch that keeps
-- a key's request and response bodies.
-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN     "capture_bodies" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "request_log" (
    "id" BIGSERIAL NOT NULL,
    "request_id" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL,
    "api_key_id" TEXT,
    "user_id" TEXT,
    "oauth_app_id" TEXT,
    "method" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "endpoint" TEXT,
    "format" TEXT,
    "model" TEXT,
    "status" INTEGER NOT NULL,
    "error_code" TEXT,
    "stream" BOOLEAN NOT NULL DEFAULT false,
    "aborted" BOOLEAN NOT NULL DEFAULT false,
    "job_id" TEXT,
    "latency_ms" INTEGER NOT NULL,
    "first_token_ms" INTEGER,
    "upstream" TEXT,
    "attempts" JSONB NOT NULL DEFAULT '[]',
    "warnings" JSONB NOT NULL DEFAULT '[]',
    "bodies_key" TEXT,

    CONSTRAINT "request_log_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "request_log_created_at_id_idx" ON "request_log"("created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "request_log_user_id_created_at_id_idx" ON "request_log"("user_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "request_log_api_key_id_created_at_id_idx" ON "request_log"("api_key_id", "created_at" DESC, "id" DESC);
