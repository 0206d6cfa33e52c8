-- A client's own request id, kept beside the gateway's (issue 42, docs/decisions/0034-client-values-and-held-secrets.md).
-- AlterTable
ALTER TABLE "request_log" ADD COLUMN     "client_request_id" TEXT;

-- CreateIndex
CREATE INDEX "request_log_client_request_id_idx" ON "request_log"("client_request_id");
