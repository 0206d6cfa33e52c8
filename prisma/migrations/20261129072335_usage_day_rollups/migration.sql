-- usage_daily summed again per day and model and per day and user (issue 43, decision 0036): the
-- operators' usage report reads these, a row per model or user a day, instead of usage_daily's row
-- per key, model and user a day. The ledger's writes add to all three in one statement from now on.
-- CreateTable
CREATE TABLE "usage_day_models" (
    "day" DATE NOT NULL,
    "model" TEXT NOT NULL,
    "requests" INTEGER NOT NULL DEFAULT 0,
    "errors" INTEGER NOT NULL DEFAULT 0,
    "prompt_tokens" BIGINT NOT NULL DEFAULT 0,
    "completion_tokens" BIGINT NOT NULL DEFAULT 0,
    "cached_tokens" BIGINT NOT NULL DEFAULT 0,
    "reasoning_tokens" BIGINT NOT NULL DEFAULT 0,
    "surcharge_tokens" BIGINT NOT NULL DEFAULT 0,
    "billed_tokens" BIGINT NOT NULL DEFAULT 0,
    "cache_write_tokens" BIGINT NOT NULL DEFAULT 0,
    "cache_write_1h_tokens" BIGINT NOT NULL DEFAULT 0,
    "audio_input_tokens" BIGINT NOT NULL DEFAULT 0,
    "image_input_tokens" BIGINT NOT NULL DEFAULT 0,
    "audio_output_tokens" BIGINT NOT NULL DEFAULT 0,
    "image_output_tokens" BIGINT NOT NULL DEFAULT 0,
    "web_search_calls" BIGINT NOT NULL DEFAULT 0,
    "cost" DECIMAL NOT NULL DEFAULT 0,
    "unpriced_requests" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "usage_day_models_pkey" PRIMARY KEY ("day","model")
);

-- CreateTable
CREATE TABLE "usage_day_users" (
    "day" DATE NOT NULL,
    "user_id" TEXT NOT NULL,
    "requests" INTEGER NOT NULL DEFAULT 0,
    "errors" INTEGER NOT NULL DEFAULT 0,
    "prompt_tokens" BIGINT NOT NULL DEFAULT 0,
    "completion_tokens" BIGINT NOT NULL DEFAULT 0,
    "cached_tokens" BIGINT NOT NULL DEFAULT 0,
    "reasoning_tokens" BIGINT NOT NULL DEFAULT 0,
    "surcharge_tokens" BIGINT NOT NULL DEFAULT 0,
    "billed_tokens" BIGINT NOT NULL DEFAULT 0,
    "cache_write_tokens" BIGINT NOT NULL DEFAULT 0,
    "cache_write_1h_tokens" BIGINT NOT NULL DEFAULT 0,
    "audio_input_tokens" BIGINT NOT NULL DEFAULT 0,
    "image_input_tokens" BIGINT NOT NULL DEFAULT 0,
    "audio_output_tokens" BIGINT NOT NULL DEFAULT 0,
    "image_output_tokens" BIGINT NOT NULL DEFAULT 0,
    "web_search_calls" BIGINT NOT NULL DEFAULT 0,
    "cost" DECIMAL NOT NULL DEFAULT 0,
    "unpriced_requests" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "usage_day_users_pkey" PRIMARY KEY ("day","user_id")
);

-- Filled from usage_daily as it stands: the sums of its rows, exactly. Writers wait until this
-- commits (the lock a rebuild takes), so no batch falls between what is read here and what follows.
LOCK TABLE "usage_daily" IN SHARE ROW EXCLUSIVE MODE;

INSERT INTO "usage_day_models" ("day", "model", "requests", "errors", "prompt_tokens", "completion_tokens", "cached_tokens", "reasoning_tokens", "surcharge_tokens", "billed_tokens", "cache_write_tokens", "cache_write_1h_tokens", "audio_input_tokens", "image_input_tokens", "audio_output_tokens", "image_output_tokens", "web_search_calls", "cost", "unpriced_requests")
SELECT "day", "model", sum("requests"), sum("errors"), sum("prompt_tokens"), sum("completion_tokens"), sum("cached_tokens"), sum("reasoning_tokens"), sum("surcharge_tokens"), sum("billed_tokens"), sum("cache_write_tokens"), sum("cache_write_1h_tokens"), sum("audio_input_tokens"), sum("image_input_tokens"), sum("audio_output_tokens"), sum("image_output_tokens"), sum("web_search_calls"), sum("cost"), sum("unpriced_requests")
FROM "usage_daily" GROUP BY 1, 2;

INSERT INTO "usage_day_users" ("day", "user_id", "requests", "errors", "prompt_tokens", "completion_tokens", "cached_tokens", "reasoning_tokens", "surcharge_tokens", "billed_tokens", "cache_write_tokens", "cache_write_1h_tokens", "audio_input_tokens", "image_input_tokens", "audio_output_tokens", "image_output_tokens", "web_search_calls", "cost", "unpriced_requests")
SELECT "day", "user_id", sum("requests"), sum("errors"), sum("prompt_tokens"), sum("completion_tokens"), sum("cached_tokens"), sum("reasoning_tokens"), sum("surcharge_tokens"), sum("billed_tokens"), sum("cache_write_tokens"), sum("cache_write_1h_tokens"), sum("audio_input_tokens"), sum("image_input_tokens"), sum("audio_output_tokens"), sum("image_output_tokens"), sum("web_search_calls"), sum("cost"), sum("unpriced_requests")
FROM "usage_daily" GROUP BY 1, 2;
