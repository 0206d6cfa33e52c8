-- DropIndex
DROP INDEX "usage_records_model_created_at_idx";

-- DropIndex
DROP INDEX "usage_records_user_id_created_at_idx";

-- AlterTable
ALTER TABLE "users" ADD COLUMN     "role" TEXT NOT NULL DEFAULT 'user';

-- CreateIndex
CREATE INDEX "jobs_user_id_created_at_idx" ON "jobs"("user_id", "created_at");

-- CreateIndex
CREATE INDEX "jobs_api_key_id_created_at_idx" ON "jobs"("api_key_id", "created_at");

-- CreateIndex
CREATE INDEX "usage_records_created_at_idx" ON "usage_records"("created_at");
