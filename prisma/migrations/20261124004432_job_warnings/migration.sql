-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "pronunciation_warnings" TEXT[] DEFAULT ARRAY[]::TEXT[];
