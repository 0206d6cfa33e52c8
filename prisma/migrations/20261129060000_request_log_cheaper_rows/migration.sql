-- Each request writes a request-log row: make the row cheaper (issue 43, docs/benchmarks.md).
-- The attempts and warnings are kept as JSON text: nothing queries into them, and parsing them
-- into jsonb was a seventh of the embedded database's work per row.
-- AlterTable
ALTER TABLE "request_log" ALTER COLUMN "attempts" SET DATA TYPE TEXT USING "attempts"::text,
ALTER COLUMN "attempts" SET DEFAULT '[]',
ALTER COLUMN "warnings" SET DATA TYPE TEXT USING "warnings"::text,
ALTER COLUMN "warnings" SET DEFAULT '[]';

-- Most rows hold no client request id: only those that do are indexed.
DROP INDEX "request_log_client_request_id_idx";
CREATE INDEX "request_log_client_request_id_idx" ON "request_log"("client_request_id") WHERE "client_request_id" IS NOT NULL;
