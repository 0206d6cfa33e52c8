// The Dockerfile, read the way scripts/check-dockerfile.mjs runs it in CI (.ci/run): its lint, and
// the facts the image must agree on with the server, the build scripts and .dockerignore.
import { validate } from 'dockerfile-utils';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE_OWN, dockerfilePlan, parseYaml, planDockerfileText, read, root, serverReads, type Plan, type Stage } from './deploy-files.ts';

const plan: Plan = await dockerfilePlan();
const stage = (name: string): Stage => plan.stages.find((s) => s.name === name)!;
const runtime = plan.final;
const runs = (s: Stage) => s.steps.filter((x) => x.kind === 'run');
// A CommonJS function whose typings claim an ES default export: required, typed as that export.
const ignore = createRequire(import.meta.url)('@balena/dockerignore') as typeof import('@balena/dockerignore').default;
const ignored = ignore().add(read('.dockerignore'));

describe('Dockerfile', () => {
  it('is read by scripts/check-dockerfile.mjs, which refuses what it cannot run the way a build would', async () => {
    const refused = async (line: string) => planDockerfileText(`FROM node:24.21.0-trixie-slim AS runtime\nWORKDIR /app\n${line}\n`).then(() => 'accepted', (e: Error) => e.message);
    expect(await refused('VOLUME /data')).toMatch(/VOLUME is not modelled/);
    expect(await refused('RUN --mount=type=secret,id=npm npm ci')).toMatch(/only cache mounts are modelled/);
    expect(await refused('COPY --exclude=*.md docs/ docs/')).toMatch(/--exclude is not modelled/);
    expect(await refused('RUN ["npm", "ci"]')).toMatch(/exec-form RUN is not modelled/);
    expect(await refused('ENTRYPOINT node bin/model-gateway.mjs')).toMatch(/use the exec form/);
    expect(await refused('RUN --mount=type=cache,target=/root/.npm npm ci')).toBe('accepted');
  });

  it('has no problem dockerfile-utils (the VS Code Docker linter) reports', () => {
    expect(validate(read('Dockerfile')).map((d) => `${d.range.start.line + 1}: ${d.message}`)).toEqual([]);
  });

  it('builds in three stages from one exactly pinned official Node image, the one .ci/run checks it under', () => {
    expect(plan.stages.map((s) => s.name)).toEqual(['build', 'deps', 'runtime']);
    expect(new Set(plan.stages.map((s) => s.image))).toEqual(new Set([plan.globalArgs.NODE_IMAGE]));
    expect(plan.globalArgs.NODE_IMAGE).toMatch(/^node:\d+\.\d+\.\d+-[a-z]+-slim$/);
    expect(read('.ci/run')).toContain('scripts/check-dockerfile.mjs --node-version');
  });

  it('runs what postinstall makes in the build stage, and installs production dependencies only for the runtime', () => {
    expect(runs(stage('build')).map((s) => s.command)).toEqual(['npm ci --ignore-scripts --no-audit --no-fund', 'npm run postinstall']);
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string>; devDependencies: Record<string, string>; dependencies: Record<string, string> };
    // What postinstall needs: the prisma CLI is a dev dependency (so the build stage installs
    // them); esbuild, Preact and Chart.js are dependencies.
    expect(pkg.scripts.postinstall).toBe('node scripts/prisma-generate.mjs && node scripts/bundle.mjs && node scripts/build-web.mjs');
    expect(pkg.devDependencies.prisma).toBeDefined();
    expect(runs(stage('deps')).map((s) => s.command?.split('&&')[0]!.trim())).toEqual(['npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund']);
    // The runtime stage copies node_modules from deps only, and only dist/ from build.
    const fromStages = runtime.steps.filter((s) => s.kind === 'copy' && s.from).map((s) => [s.from, s.sources]);
    expect(fromStages).toEqual([
      ['deps', ['/app/node_modules/']],
      ['build', ['/app/dist/']],
    ]);
  });

  it('carries every file the server finds through projectPath() at run time', () => {
    // projectPath('a', 'b', …): the literal leading parts name what must be in the image.
    const reads = new Set<string>();
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith('.ts')) {
          for (const m of read(path.relative(root, p)).matchAll(/projectPath\(([^)]*)\)/g)) {
            const parts: string[] = [];
            for (const arg of m[1]!.split(',').map((a) => a.trim())) {
              const lit = /^'([^']*)'$/.exec(arg);
              if (!lit) break;
              parts.push(lit[1]!);
            }
            if (parts.length) reads.add(parts.join('/'));
          }
        }
      }
    };
    walk(path.join(root, 'server'));
    expect(reads.size).toBeGreaterThanOrEqual(5);
    // What the runtime stage holds, relative to WORKDIR: whole directories (copied directories,
    // and what other stages give), and single files (named, or matched by a glob).
    const dirs: string[] = [];
    const files: string[] = [];
    for (const s of runtime.steps.filter((x) => x.kind === 'copy')) {
      const dest = path.posix.relative(runtime.workdir, s.dest!);
      if (s.from) {
        dirs.push(dest);
        continue;
      }
      for (const src of s.sources!) {
        const rel = src.replace(/\/$/, '');
        if (rel.includes('*')) {
          const [dir, pattern] = [path.posix.dirname(rel), path.posix.basename(rel)];
          const re = new RegExp(`^${pattern.replace(/\./g, '\\.').replace(/\*/g, '[^/]*')}$`);
          for (const f of readdirSync(path.join(root, dir)).filter((n) => re.test(n))) files.push(path.posix.join(dest, f));
        } else if (statSync(path.join(root, rel)).isDirectory()) {
          dirs.push(dest);
        } else {
          files.push(path.posix.join(dest, path.posix.basename(rel)));
        }
      }
    }
    for (const p of reads) {
      const covered = files.includes(p) || dirs.some((d) => p === d || p.startsWith(`${d}/`)) || files.some((f) => f.startsWith(`${p}/`));
      expect(covered, `server reads ${p} at run time: COPY it into the runtime stage`).toBe(true);
    }
    // projectPath('docs', file): the guides served at /docs/guide (server/http/guide.ts).
    const guides = [...read('server/http/guide.ts').matchAll(/'([a-z-]+\.md)'/g)].map((m) => `docs/${m[1]}`);
    expect(guides.length).toBeGreaterThanOrEqual(5);
    for (const g of guides) expect(files, `${g} is served at /docs/guide`).toContain(g);
  });

  it('copies only files of the build context that .dockerignore lets through', () => {
    const sources = plan.stages.flatMap((s) => s.steps.filter((x) => x.kind === 'copy' && !x.from).flatMap((x) => x.sources!));
    for (const src of sources) {
      if (src === '.' || src.includes('*')) continue;
      const rel = src.replace(/\/$/, '');
      expect(existsSync(path.join(root, rel)), `${src} exists`).toBe(true);
      expect(ignored.ignores(rel), `${src} is not excluded by .dockerignore`).toBe(false);
    }
  });

  it('.dockerignore is an allowlist that keeps secrets and local builds out', () => {
    expect(read('.dockerignore').split('\n').find((l) => l.trim() && !l.startsWith('#'))).toBe('*');
    for (const p of ['gateway.config.yaml', 'gateway.config.json', '.env', 'data/admin-token', 'node_modules/x/index.js', 'dist/gateway.mjs', 'server/db/generated/client.ts', 'web/node_modules/x', 'test/x.test.ts', '.git/config']) {
      expect(ignored.ignores(p), p).toBe(true);
    }
    for (const p of ['package.json', 'package-lock.json', 'server/main.ts', 'web/src/main.tsx', 'clients/typescript/src/schema.ts', 'prisma/schema.prisma', 'docs/api.md', 'bin/model-gateway.mjs']) {
      expect(ignored.ignores(p), p).toBe(false);
    }
  });

  it('marks as container-only nothing that builds or runs the gateway', () => {
    const skipped = plan.stages.flatMap((s) => s.steps.filter((x) => x.kind === 'run' && x.containerOnly).map((x) => x.command!));
    expect(skipped).toHaveLength(2);
    for (const cmd of skipped) expect(cmd).not.toMatch(/\b(npm|npx|node)\b/);
    expect(skipped[0]).toMatch(/^apt-get update\s+&&\s+apt-get install -y --no-install-recommends tini\s/);
    expect(skipped[1]).toMatch(/^mkdir -p \/data\s+&&\s+chown 1000:1000 \/data\s/);
  });

  it('runs `model-gateway serve` as a non-root user under tini, exec form, on port 8080', () => {
    expect(runtime.user).toBe('1000:1000');
    expect(runtime.entrypoint).toEqual(['/usr/bin/tini', '--', 'node', '/app/bin/model-gateway.mjs']);
    expect(runtime.cmd).toEqual(['serve']);
    expect(runtime.expose).toEqual(['8080']);
    expect(runtime.env.PORT).toBe('8080');
    expect(runtime.env.DATA_DIR).toBe('/data');
    expect(existsSync(path.join(root, 'bin/model-gateway.mjs'))).toBe(true);
  });

  it('bakes in no secret, and sets only variables the server (or Node) reads', () => {
    for (const [name, value] of Object.entries(runtime.env)) {
      expect(name).not.toMatch(/SECRET|PASSWORD|TOKEN|_KEY/);
      expect(NODE_OWN.has(name) || serverReads(name), `${name}=${value} is read by the server`).toBe(true);
    }
  });

  it('checks health on /readyz with Node\'s fetch, the same command compose.yaml uses', () => {
    const hc = runtime.healthcheck!;
    expect(hc.command[0]).toBe('node');
    expect(hc.command.join(' ')).toContain("'/readyz'");
    expect(hc.options).toEqual({ interval: '10s', timeout: '5s', 'start-period': '60s', 'start-interval': '2s', retries: '3' });
    const compose = parseYaml(read('compose.yaml')) as { services: Record<string, { healthcheck?: { test: string[] } }> };
    for (const name of ['gateway-1', 'gateway-2']) expect(compose.services[name]!.healthcheck!.test).toEqual(['CMD', ...hc.command]);
  });
});
