-- AlterTable
ALTER TABLE "oauth_codes" ADD COLUMN     "grant_id" TEXT;
