# syntax=docker/dockerfile:1
# The Model Gateway image: `model-gateway serve` on port 8080 (docs/deploy.md).
#
#   docker build -t model-gateway .
#   docker run --rm -p 8080:8080 -v gateway-data:/data model-gateway
#
# CI has no container engine: scripts/check-dockerfile.mjs reads this file and runs its COPY and
# RUN steps itself, in a temporary directory per stage, then starts the server from the runtime
# stage's files and checks /readyz. So keep RUN steps to paths relative to WORKDIR; a step that
# only makes sense inside a container is marked `# check-dockerfile: container-only` (the test in
# test/deploy/ allows no npm or node command among those).

# Node 24: the LTS line with the longest support left (to April 2028) among the ones CI runs the
# whole suite on (.ci/run: 20, 22, 24); 22 ends in April 2027. Debian trixie (stable) slim: glibc
# for the prebuilt binaries in the dependency tree, no compiler or curl. An exact version, so a
# rebuild gets the same Node; add `@sha256:…` to pin the bytes as well (Renovate/Dependabot bump
# both). The check runs on this same Node version (.ci/run reads it from here).
ARG NODE_IMAGE=node:24.21.0-trixie-slim

# ---- build: the full install (dev dependencies included), then what postinstall makes ----------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
# The manifests first, so the dependency layer is reused until the lockfile changes. Install
# scripts are skipped: dependencies' own ones fetch tools this build does not use (Prisma's
# engines, the dev CLIs), and the project's postinstall needs the sources, copied next.
COPY package.json package-lock.json ./
COPY clients/typescript/package.json clients/typescript/
RUN --mount=type=cache,target=/root/.npm,sharing=locked \
    npm ci --ignore-scripts --no-audit --no-fund
COPY . .
# Exactly what `npm install` runs after installing (package.json "postinstall"): `prisma generate`
# (the prisma CLI is a dev dependency), the esbuild bundle dist/gateway.mjs and the dashboard in
# dist/web.
RUN npm run postinstall

# ---- deps: production dependencies only ---------------------------------------------------------
# `npm ci --omit=dev` alone keeps the prisma CLI and TypeScript (~260 MB): they are optional peer
# dependencies of @prisma/client as well as dev dependencies of ours, and npm keeps such packages
# unless optional ones are omitted too. --omit=optional also drops esbuild's platform binary
# (only needed to rebuild, and the image's build is checked fresh below) and msgpackr's native
# accelerator (msgpackr falls back to JavaScript). --ignore-scripts: the project's postinstall
# cannot run without the sources, and no production dependency needs its own.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY clients/typescript/package.json clients/typescript/
RUN --mount=type=cache,target=/root/.npm,sharing=locked \
    npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund \
 && rm -f node_modules/@model-gateway/client
# (That link points at the workspace of the generated API client, which the dashboard's bundle
# already contains and nothing on the server imports.)

# ---- runtime: what `model-gateway serve` and `model-gateway migrate` read, nothing else ----------
FROM ${NODE_IMAGE} AS runtime
# tini as PID 1 (see ENTRYPOINT). First, as it changes only with the base image.
# check-dockerfile: container-only
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    DATA_DIR=/data \
    PORT=8080 \
    LOG_FORMAT=json
WORKDIR /app
COPY --from=deps /app/node_modules/ node_modules/
# The project root is found by this package.json (server/runtime/paths.ts); the CLI entry and the
# two build scripts it imports to check that the bundle and the dashboard are fresh.
COPY package.json ./
COPY bin/ bin/
COPY scripts/bundle.mjs scripts/build-web.mjs scripts/
# Read at run time: the migrations (`migrate`, and `serve` at start-up), the embedded database's
# helper scripts (only without DATABASE_URL), the user guide served at /docs/guide.
COPY prisma/migrations/ prisma/migrations/
COPY server/db/pglite-initdb.mjs server/db/pglite-worker.mjs server/db/
COPY docs/*.md docs/
COPY --from=build /app/dist/ dist/
# bin/model-gateway.mjs rebuilds the bundle when a file under server/ or package.json is newer
# than it. The directories the COPY steps above create are as new as this build, and the runtime
# user could not write dist/ anyway, so the build is marked as newest and checked fresh here: a
# stale build fails the image build instead of the container's start.
RUN touch dist/gateway.mjs dist/web/index.html \
 && node --input-type=module -e "const [b, w] = await Promise.all([import('./scripts/bundle.mjs'), import('./scripts/build-web.mjs')]); if (!b.bundleIsFresh() || !w.webBuildIsFresh()) { console.error('the bundle or the dashboard build is older than its sources'); process.exit(1); }"
# DATA_DIR belongs to the runtime user (a named volume mounted there starts with this owner); the
# app's own files stay root's, read-only to it. `model-gateway` on PATH for `docker exec … model-gateway users …`.
# check-dockerfile: container-only
RUN mkdir -p /data \
 && chown 1000:1000 /data \
 && ln -s /app/bin/model-gateway.mjs /usr/local/bin/model-gateway
# The image's `node` user, by number so that Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 8080
# Slim images have no curl: Node's own fetch. /readyz answers 503 when PostgreSQL or Redis is
# unreachable (and while the process stops), 200 when it can serve. start-period: the first start
# with the embedded database creates and migrates it (10-30 s).
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --start-interval=2s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/readyz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))"]
# Exec form, no shell and no npm between the signal and the gateway: tini is PID 1 and passes
# SIGTERM/SIGINT straight to node, which drains and exits. Node itself as PID 1 would do once the
# gateway has installed its handlers, but the kernel drops every signal PID 1 has no handler for:
# a container stopped while still starting (migrations, waiting on the migration lock) would sit
# out the whole grace period, and a second Ctrl-C would not end it. tini also reaps orphans.
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/bin/model-gateway.mjs"]
CMD ["serve"]
