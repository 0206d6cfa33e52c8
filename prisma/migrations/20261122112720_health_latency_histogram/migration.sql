-- AlterTable
ALTER TABLE "model_health_samples" ADD COLUMN     "last_error_at" TIMESTAMP(3),
ADD COLUMN     "last_success_at" TIMESTAMP(3),
ADD COLUMN     "latency_hist" INTEGER[] DEFAULT ARRAY[]::INTEGER[];
