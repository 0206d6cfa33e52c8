-- CreateTable
CREATE TABLE "gateway_settings" (
    "name" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "gateway_settings_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "blobs" (
    "key" TEXT NOT NULL,
    "version" TEXT NOT NULL,
    "size" BIGINT NOT NULL,
    "content_type" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "blobs_pkey" PRIMARY KEY ("key")
);

-- CreateTable
CREATE TABLE "blob_chunks" (
    "version" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "data" BYTEA NOT NULL,

    CONSTRAINT "blob_chunks_pkey" PRIMARY KEY ("version","seq")
);

-- CreateTable
CREATE TABLE "blob_writes" (
    "version" TEXT NOT NULL,
    "touched_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "blob_writes_pkey" PRIMARY KEY ("version")
);

-- CreateIndex
CREATE UNIQUE INDEX "blobs_version_key" ON "blobs"("version");

-- CreateIndex
CREATE INDEX "blob_writes_touched_at_idx" ON "blob_writes"("touched_at");

-- Chunks are audio, images and video, already compressed: stored out of line without another
-- compression attempt (TOAST's default would try, and spend CPU for nothing).
ALTER TABLE "blob_chunks" ALTER COLUMN "data" SET STORAGE EXTERNAL;
