-- AlterTable
ALTER TABLE "usage_records" ADD COLUMN     "metered_quantity" DOUBLE PRECISION,
ADD COLUMN     "metered_unit" TEXT;
