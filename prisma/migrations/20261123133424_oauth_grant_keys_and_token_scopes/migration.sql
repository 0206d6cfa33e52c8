-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN     "grant_id" TEXT;

-- AlterTable
ALTER TABLE "oauth_tokens" ADD COLUMN     "scopes" TEXT[] DEFAULT ARRAY[]::TEXT[];

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_grant_id_key" ON "api_keys"("grant_id");

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_grant_id_fkey" FOREIGN KEY ("grant_id") REFERENCES "oauth_grants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Tokens issued before scopes were stored per token keep what their grant held then.
UPDATE "oauth_tokens" t SET "scopes" = g."scopes" FROM "oauth_grants" g WHERE t."grant_id" = g."id";

-- The per-user "stable" key was handed to every app granted inference and outlived their grants;
-- it cannot be tied to one grant, so it is retired. Apps get a grant-bound key at their next
-- userinfo call or API request (docs/decisions/0006-oauth-hardening.md).
UPDATE "api_keys" SET "revoked_at" = now() WHERE "kind" = 'stable' AND "revoked_at" IS NULL;
