-- Budget alerts (issue 34): a spend budget's threshold crossed, recorded once per scope, owner,
-- period and threshold across instances (the unique index; INSERT … ON CONFLICT DO NOTHING), and
-- posted to the operator's webhook with retries persisted here (server/billing/budget-alerts.ts).

-- CreateTable
CREATE TABLE "budget_alerts" (
    "id" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "owner_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "key_id" TEXT,
    "period" TEXT NOT NULL,
    "period_start" TEXT NOT NULL,
    "threshold_percent" INTEGER NOT NULL,
    "limit_nano" BIGINT NOT NULL,
    "spent_nano" BIGINT NOT NULL,
    "delivery" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMP(3),
    "claimed_until" TIMESTAMP(3),
    "last_error" TEXT,
    "delivered_at" TIMESTAMP(3),
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "budget_alerts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "budget_alerts_delivery_next_attempt_at_idx" ON "budget_alerts"("delivery", "next_attempt_at");

-- CreateIndex
CREATE INDEX "budget_alerts_user_id_created_at_idx" ON "budget_alerts"("user_id", "created_at");

-- CreateIndex
CREATE INDEX "budget_alerts_key_id_created_at_idx" ON "budget_alerts"("key_id", "created_at");

-- CreateIndex
CREATE INDEX "budget_alerts_created_at_idx" ON "budget_alerts"("created_at");

-- CreateIndex
CREATE UNIQUE INDEX "budget_alerts_once_key" ON "budget_alerts"("scope", "owner_id", "period", "period_start", "threshold_percent");
