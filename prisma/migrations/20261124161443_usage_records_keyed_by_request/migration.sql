-- DropIndex
DROP INDEX "usage_records_request_id_key";

-- AlterTable
ALTER TABLE "usage_records" DROP CONSTRAINT "usage_records_pkey",
DROP COLUMN "id",
ADD CONSTRAINT "usage_records_pkey" PRIMARY KEY ("request_id");
