-- Spend budgets set on one key (a cap beside the plan's) or one user (instead of the plan's).
ALTER TABLE "api_keys" ADD COLUMN "daily_budget_usd" DECIMAL, ADD COLUMN "monthly_budget_usd" DECIMAL;
ALTER TABLE "users" ADD COLUMN "daily_budget_usd" DECIMAL, ADD COLUMN "monthly_budget_usd" DECIMAL;
