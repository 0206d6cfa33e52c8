-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "reservation" JSONB,
ADD COLUMN     "run_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
ADD COLUMN     "state" JSONB;

-- CreateIndex
CREATE INDEX "jobs_status_run_at_idx" ON "jobs"("status", "run_at");
