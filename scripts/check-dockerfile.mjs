#!/usr/bin/env node
// Runs the Dockerfile's build for real without a container engine (CI has none), then starts the
// gateway from what the runtime stage holds and checks it serves.
//
// It does not keep a second copy of the build commands: it reads the Dockerfile, and runs each
// stage's COPY and RUN steps itself, in a directory per stage standing for the stage's file
// system (WORKDIR /app is <stage>/app), with the context filtered by .dockerignore under Docker's
// rules. Stages run concurrently, each waiting for the stages it copies from (as BuildKit does).
// What a container would start, ENTRYPOINT + CMD, is then run from the runtime stage's directory,
// as the Dockerfile's USER when this runs as root: `migrate`, then `serve` on the embedded database
// (a fresh DATA_DIR, a free port), until /readyz answers 200 and the HEALTHCHECK command passes;
// then SIGTERM, which must end it cleanly. The temporary directory is removed at the end (--keep
// leaves it).
//
// What it cannot model, it refuses (an instruction, a flag, a mount type), so a Dockerfile change
// either runs here or fails here; it never passes unchecked. What differs from a real build:
// the base image's contents (Node, npm and tini come from this machine: run it under the image's
// Node, as .ci/run does; `--node-version` prints it), COPY --from makes hard links instead of
// copies (the runtime stage only reads them), COPY's --chown/--chmod are not applied (the files
// stay root's: stricter than the image, never looser), and RUN steps marked `# check-dockerfile:
// container-only` on the line above (system packages, set-up outside WORKDIR) are skipped;
// test/deploy/dockerfile.test.ts keeps npm and node out of those.
//
//   node scripts/check-dockerfile.mjs [--keep]
//   node scripts/check-dockerfile.mjs --node-version     # the base image's Node version, e.g. 24.21.0
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, cpSync, existsSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
export const CONTAINER_ONLY = 'check-dockerfile: container-only';

// ---- reading the Dockerfile --------------------------------------------------------------------

/** Docker's variable substitution ($VAR, ${VAR}, ${VAR:-default}) in the instructions that do it. */
function substitute(text, vars, where) {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_m, braced, fallback, bare) => {
    const name = braced ?? bare;
    if (vars[name] !== undefined && vars[name] !== '') return vars[name];
    if (fallback !== undefined) return fallback;
    throw new Error(`${where}: $${name} is not set (check-dockerfile knows ARG and ENV values only)`);
  });
}

/** A shell-form argument as Docker passes it to /bin/sh -c: continuation lines joined, comment lines inside dropped. */
function shellCommand(raw) {
  const lines = raw.split('\n');
  const kept = [lines[0], ...lines.slice(1).filter((l) => !/^\s*#/.test(l))];
  return kept.join('\n').replace(/\\\n/g, '').trim();
}

function flagsOf(instruction, allowed, where) {
  const flags = {};
  for (const f of instruction.getFlags()) {
    const name = f.getName();
    if (!allowed.includes(name)) throw new Error(`${where}: --${name} is not modelled by scripts/check-dockerfile.mjs; teach it, so that the check stays the build`);
    flags[name] = f.getValue() ?? '';
  }
  return flags;
}

/**
 * The Dockerfile as stages of steps, without running anything: what this script runs, and what
 * test/deploy/dockerfile.test.ts checks.
 */
export async function planDockerfile(text) {
  const { DockerfileParser } = await import('dockerfile-ast');
  const dockerfile = DockerfileParser.parse(text);
  // Comments by line, to find the container-only marker on the line(s) above a RUN.
  const comments = new Map(dockerfile.getComments().map((c) => [c.getRange().start.line, c.getContent().trim()]));
  const globalArgs = {};
  const stages = [];
  let stage = null;
  for (const ins of dockerfile.getInstructions()) {
    const keyword = ins.getKeyword();
    const line = ins.getRange().start.line + 1;
    const where = `Dockerfile:${line} ${keyword}`;
    if (keyword === 'ARG') {
      const p = ins.getProperty();
      const name = p.getName();
      const value = p.getValue() ?? undefined;
      if (!stage) globalArgs[name] = value;
      // Inside a stage, `ARG NAME` brings a global one into scope (Docker's rule).
      else stage.vars[name] = value ?? globalArgs[name];
      continue;
    }
    if (keyword === 'FROM') {
      const args = ins.getArguments().map((a) => a.getValue());
      flagsOf(ins, [], where);
      const image = substitute(args[0], globalArgs, where);
      const name = args.length === 3 && args[1].toUpperCase() === 'AS' ? args[2] : String(stages.length);
      const base = stages.find((s) => s.name === image);
      stage = { name, image, from: base?.name ?? null, line, vars: {}, env: {}, workdir: '/', user: null, steps: [], entrypoint: null, cmd: null, healthcheck: null, expose: [] };
      if (base) Object.assign(stage, { env: { ...base.env }, workdir: base.workdir, user: base.user });
      stages.push(stage);
      continue;
    }
    if (!stage) throw new Error(`${where}: before the first FROM`);
    const vars = { ...stage.vars, ...stage.env };
    switch (keyword) {
      case 'WORKDIR': {
        const dir = substitute(ins.getArgumentsContent(), vars, where);
        stage.workdir = path.posix.resolve(stage.workdir, dir);
        stage.steps.push({ kind: 'workdir', line, dir: stage.workdir });
        break;
      }
      case 'ENV':
        for (const p of ins.getProperties()) stage.env[p.getName()] = substitute(p.getValue() ?? '', vars, where);
        break;
      case 'USER':
        stage.user = substitute(ins.getArgumentsContent(), vars, where);
        break;
      case 'EXPOSE':
        stage.expose.push(...ins.getArguments().map((a) => a.getValue()));
        break;
      case 'LABEL':
        break;
      case 'COPY': {
        const flags = flagsOf(ins, ['from', 'chown', 'chmod', 'link'], where);
        const args = ins.getArguments().map((a) => substitute(a.getValue(), vars, where));
        if (args.length < 2) throw new Error(`${where}: needs a source and a destination`);
        const dest = path.posix.resolve(stage.workdir, args.at(-1));
        stage.steps.push({ kind: 'copy', line, from: flags.from ?? null, sources: args.slice(0, -1), dest, intoDir: args.at(-1).endsWith('/') || args.length > 2 });
        break;
      }
      case 'RUN': {
        const flags = flagsOf(ins, ['mount'], where);
        // A cache mount only keeps a cache between builds (npm's, here: ~/.npm already is one).
        if (flags.mount !== undefined && !/^type=cache(,|$)/.test(flags.mount)) throw new Error(`${where}: only cache mounts are modelled (--mount=${flags.mount})`);
        if (ins.getJSONStrings().length) throw new Error(`${where}: exec-form RUN is not modelled; use the shell form`);
        const marked = comments.get(ins.getRange().start.line - 1) === CONTAINER_ONLY;
        // ENV applies from where it stands: each RUN gets the environment as it is at its line.
        stage.steps.push({ kind: 'run', line, command: shellCommand(ins.getRawArgumentsContent()), containerOnly: marked, env: { ...stage.env } });
        break;
      }
      case 'HEALTHCHECK': {
        const content = ins.getArgumentsContent();
        const cmd = content.replace(/^(?:--\S+\s+)*/, '');
        if (!cmd.startsWith('CMD ')) throw new Error(`${where}: only HEALTHCHECK [options] CMD [...] is modelled`);
        stage.healthcheck = { options: Object.fromEntries(ins.getFlags().map((f) => [f.getName(), f.getValue()])), command: JSON.parse(cmd.slice(4)) };
        break;
      }
      case 'ENTRYPOINT':
      case 'CMD': {
        const strings = ins.getJSONStrings().map((s) => s.getJSONValue());
        if (!strings.length) throw new Error(`${where}: use the exec form (["…"]), so that the process gets signals itself`);
        if (keyword === 'ENTRYPOINT') stage.entrypoint = strings;
        else stage.cmd = strings;
        break;
      }
      default:
        throw new Error(`${where}: ${keyword} is not modelled by scripts/check-dockerfile.mjs; teach it, so that the check stays the build`);
    }
  }
  if (!stages.length) throw new Error('Dockerfile: no FROM');
  return { globalArgs, stages, final: stages.at(-1) };
}

/** The Node version of the final stage's base image (node:<version>-…). */
export function imageNodeVersion(plan) {
  const m = /^(?:docker\.io\/)?(?:library\/)?node:(\d+(?:\.\d+){0,2})/.exec(plan.final.image);
  if (!m) throw new Error(`the runtime image ${plan.final.image} is not an official node:<version> image`);
  return m[1];
}

// ---- running it --------------------------------------------------------------------------------

/** Variables passed on from this machine (Node, npm and their network settings), never the gateway's own. */
function hostEnv() {
  const keep = /^(PATH|HOME|LANG|LC_ALL|TZ|TMPDIR|NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|(HTTPS?|NO)_PROXY|(https?|no)_proxy|npm_config_(registry|cache|userconfig|globalconfig))$/;
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => keep.test(k)));
}

function log(prefix, text) {
  for (const line of text.split('\n')) if (line.trim()) process.stdout.write(`[${prefix}] ${line}\n`);
}

/**
 * Steps still running, each in a process group of its own (the shell and what it starts): ended
 * together when another stage fails or the check is interrupted, so nothing outlives the check.
 */
const running = new Set();
const stopRunning = () => {
  for (const child of running) {
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      child.kill('SIGTERM');
    }
  }
};

function run(prefix, command, args, opts) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    running.add(child);
    child.on('close', () => running.delete(child));
    let tail = '';
    const out = (d) => {
      const s = d.toString();
      tail = (tail + s).slice(-4000);
      log(prefix, s);
    };
    child.stdout.on('data', out);
    child.stderr.on('data', out);
    child.on('error', reject);
    child.on('close', (code, signal) => (code === 0 ? resolve() : reject(new Error(`${prefix}: \`${[command, ...args].join(' ').slice(0, 200)}\` exited with ${code ?? signal}`))));
  });
}

async function loadIgnore() {
  const { default: ignore } = await import('@balena/dockerignore');
  const text = existsSync(path.join(root, '.dockerignore')) ? readFileSync(path.join(root, '.dockerignore'), 'utf8') : '';
  const ig = ignore().add(text);
  // A directory the rules exclude is still walked when an exception (!pattern) may reach inside it.
  const exceptions = text.split('\n').map((l) => l.trim()).filter((l) => l.startsWith('!')).map((l) => l.slice(1).replace(/^\/+/, ''));
  const mayReinclude = (rel) => exceptions.some((e) => e.includes('**') || e.startsWith(`${rel}/`));
  return { ignores: (rel) => ig.ignores(rel), mayReinclude };
}

/** Files of the build context under `rel` (a file or a directory) that .dockerignore lets through. */
function contextFiles(rel, filter, out = []) {
  const abs = path.join(root, rel);
  const s = lstatSync(abs, { throwIfNoEntry: false });
  if (!s) return out;
  if (s.isDirectory()) {
    if (rel && filter.ignores(rel) && !filter.mayReinclude(rel)) return out;
    for (const e of readdirSync(abs)) contextFiles(rel ? `${rel}/${e}` : e, filter, out);
  } else if (!filter.ignores(rel)) {
    out.push(rel);
  }
  return out;
}

/** Single-segment globs (*, ?) in a COPY source, Docker-style: matched against names in one directory. */
function expandSource(source, listDir) {
  const parts = source.replace(/^\.?\/+/, '').replace(/\/+$/, '').split('/');
  let paths = [''];
  for (const part of parts) {
    if (part === '.' || part === '') continue;
    if (!/[*?[]/.test(part)) {
      paths = paths.map((p) => (p ? `${p}/${part}` : part));
      continue;
    }
    const re = new RegExp(`^${part.replace(/[.+^${}()|\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]')}$`);
    paths = paths.flatMap((p) => listDir(p).filter((n) => re.test(n)).map((n) => (p ? `${p}/${n}` : n)));
  }
  return paths;
}

function copyStep(step, stageRoot, context, stageRoots) {
  const destAbs = path.join(stageRoot, step.dest);
  const [base, files] = step.from
    ? [stageRoots.get(step.from), null]
    : [root, context];
  if (!base) throw new Error(`COPY --from=${step.from}: no such stage (images are not modelled)`);
  const listDir = (rel) => {
    if (files) {
      const prefix = rel ? `${rel}/` : '';
      return [...new Set(files.filter((f) => f.startsWith(prefix)).map((f) => f.slice(prefix.length).split('/')[0]))];
    }
    return existsSync(path.join(base, rel)) ? readdirSync(path.join(base, rel)) : [];
  };
  for (const source of step.sources) {
    const matches = expandSource(step.from ? source.replace(/^\/+/, '') : source, listDir);
    if (!matches.length || (files && matches.every((m) => m !== '' && !files.some((f) => f === m || f.startsWith(`${m}/`))))) {
      throw new Error(`Dockerfile:${step.line} COPY ${source}: nothing to copy${files ? ' (not in the build context, or excluded by .dockerignore)' : ''}`);
    }
    for (const rel of matches) {
      const src = path.join(base, rel);
      const isDir = statSync(src).isDirectory();
      // A directory's contents go into the destination; a file goes into it when it names a directory.
      const target = isDir || !step.intoDir ? destAbs : path.join(destAbs, path.basename(rel));
      mkdirSync(isDir ? target : path.dirname(target), { recursive: true });
      if (files) {
        const chosen = isDir ? files.filter((f) => f.startsWith(rel ? `${rel}/` : '')) : [rel];
        for (const f of chosen) {
          const to = isDir ? path.join(target, path.relative(rel, f)) : target;
          mkdirSync(path.dirname(to), { recursive: true });
          cpSync(path.join(root, f), to, { preserveTimestamps: true, verbatimSymlinks: true });
        }
      } else if (isDir) {
        // Hard links: instant, and the runtime stage only reads what it copies from the others.
        const r = spawnSync('cp', ['-al', `${src}/.`, target], { encoding: 'utf8' });
        if (r.status !== 0) throw new Error(`COPY --from=${step.from} ${source}: ${r.stderr}`);
      } else {
        cpSync(src, target, { preserveTimestamps: true, verbatimSymlinks: true });
      }
    }
  }
}

async function buildStages(plan, work) {
  const context = contextFiles('', await loadIgnore());
  const stageRoots = new Map(plan.stages.map((s) => [s.name, path.join(work, `stage-${s.name}`)]));
  const done = new Map();
  const skipped = [];
  for (const stage of plan.stages) {
    const deps = new Set([...(stage.from ? [stage.from] : []), ...stage.steps.filter((s) => s.kind === 'copy' && s.from).map((s) => s.from)]);
    done.set(
      stage.name,
      (async () => {
        const stageRoot = stageRoots.get(stage.name);
        if (stage.from) {
          await done.get(stage.from);
          spawnSync('cp', ['-al', `${stageRoots.get(stage.from)}/.`, stageRoot]);
        }
        mkdirSync(stageRoot, { recursive: true });
        let workdir = '/';
        for (const step of stage.steps) {
          let started = Date.now();
          if (step.kind === 'workdir') {
            workdir = step.dir;
            mkdirSync(path.join(stageRoot, workdir), { recursive: true });
          } else if (step.kind === 'copy') {
            if (step.from) {
              if (!deps.has(step.from) || !done.has(step.from)) throw new Error(`Dockerfile:${step.line}: COPY --from=${step.from} names no earlier stage`);
              await done.get(step.from);
              started = Date.now();
            }
            copyStep(step, stageRoot, context, stageRoots);
            log(stage.name, `COPY ${step.from ? `--from=${step.from} ` : ''}${step.sources.join(' ')} ${step.dest} (${Date.now() - started} ms)`);
          } else if (step.containerOnly) {
            skipped.push(`${stage.name}: ${step.command}`);
            log(stage.name, `skipped (container-only): ${step.command}`);
          } else {
            log(stage.name, `RUN ${step.command}`);
            await run(stage.name, '/bin/sh', ['-c', step.command], { cwd: path.join(stageRoot, workdir), env: { ...hostEnv(), ...step.env } });
            log(stage.name, `RUN done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
          }
        }
      })(),
    );
  }
  await Promise.all(done.values());
  return { stageRoots, skipped };
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/**
 * ENTRYPOINT + CMD with the image's paths mapped into the stage's directory. A program the base
 * image provides (tini, installed by a container-only step) is this machine's copy.
 */
function containerCommand(final, stageRoot, cmd) {
  const argv = [...(final.entrypoint ?? []), ...(cmd ?? final.cmd ?? [])];
  if (!argv.length) throw new Error('the runtime stage has neither ENTRYPOINT nor CMD');
  return argv.map((a, i) => {
    if (!a.startsWith('/')) return a;
    if (existsSync(path.join(stageRoot, a))) return path.join(stageRoot, a);
    if (i === 0 && !existsSync(a)) throw new Error(`${a} (the image's ${argv.join(' ').slice(0, 80)}): not on this machine; install it (.ci/run installs tini from Debian)`);
    return a;
  });
}

/** The Dockerfile's USER as uid/gid when this process may switch to it (root, with setpriv). */
function runAs(user) {
  if (!user || process.getuid?.() !== 0) return null;
  const m = /^(\d+)(?::(\d+))?$/.exec(user);
  if (!m) throw new Error(`USER ${user}: give it by number (uid:gid), as Kubernetes' runAsNonRoot needs`);
  if (spawnSync('setpriv', ['--version']).status !== 0) return null;
  return { uid: Number(m[1]), gid: Number(m[2] ?? m[1]) };
}

async function startAndProbe(plan, stageRoot, work) {
  const final = plan.final;
  const dataDir = path.join(work, 'data');
  const home = path.join(work, 'home');
  mkdirSync(dataDir, { recursive: true });
  mkdirSync(home, { recursive: true });
  const as = runAs(final.user);
  // The base image's part: a node binary the image's user can run (this one may sit under
  // root's home, as npx's does).
  const nodeDir = path.join(work, 'base-image-bin');
  mkdirSync(nodeDir, { recursive: true });
  try {
    linkSync(process.execPath, path.join(nodeDir, 'node'));
  } catch {
    copyFileSync(process.execPath, path.join(nodeDir, 'node'));
  }
  if (as) {
    // The image's files stay root's and the process runs as the image's user: a write into the
    // app's own directory at run time fails here as it would in the container.
    chmodSync(work, 0o755);
    for (const d of [dataDir, home]) chownSync(d, as.uid, as.gid);
  }
  const port = await freePort();
  const env = {
    ...hostEnv(),
    PATH: `${nodeDir}${path.delimiter}${process.env.PATH ?? ''}`,
    ...final.env,
    HOME: home,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    // This network reaches no catalog metadata source; the start must not wait on one.
    GATEWAY_METADATA_FETCH: 'off',
    // tini is PID 1 in the container; here it registers as a subreaper instead (and says nothing).
    TINI_SUBREAPER: '1',
  };
  const cwd = path.join(stageRoot, final.workdir);
  const wrap = (argv) => (as ? ['setpriv', [`--reuid=${as.uid}`, `--regid=${as.gid}`, '--clear-groups', '--', ...argv]] : [argv[0], argv.slice(1)]);
  const timings = {};

  let t = Date.now();
  const [migrateCmd, migrateArgs] = wrap(containerCommand(final, stageRoot, ['migrate']));
  await run('migrate', migrateCmd, migrateArgs, { cwd, env });
  timings.migrate = Date.now() - t;

  t = Date.now();
  const [serveCmd, serveArgs] = wrap(containerCommand(final, stageRoot));
  const server = spawn(serveCmd, serveArgs, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(server);
  server.on('close', () => running.delete(server));
  let exited = null;
  const exit = new Promise((resolve) => server.on('close', (code, signal) => resolve((exited = { code, signal }))));
  server.stdout.on('data', (d) => log('serve', d.toString()));
  server.stderr.on('data', (d) => log('serve', d.toString()));
  const base = `http://127.0.0.1:${port}`;
  try {
    let ready = null;
    for (const deadline = Date.now() + 120_000; Date.now() < deadline && !exited; ) {
      ready = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(5000) }).catch(() => null);
      if (ready?.status === 200) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    if (exited) throw new Error(`serve exited (${exited.code ?? exited.signal}) before /readyz answered`);
    if (ready?.status !== 200) throw new Error(`/readyz did not answer 200 within 120 s (last: ${ready?.status ?? 'no answer'})`);
    timings.ready = Date.now() - t;
    log('check', `/readyz 200 ${await ready.text()}`);
    // What the runtime stage must carry besides the API: the dashboard's build (its page needs a
    // session; the assets it names do not) and the user guide.
    const index = readFileSync(path.join(stageRoot, final.workdir, 'dist/web/index.html'), 'utf8');
    const assets = [...index.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]);
    if (assets.length < 2) throw new Error(`dist/web/index.html names ${assets.length} asset(s), expected the script and the stylesheet`);
    for (const [route, expect] of [
      ['/healthz', /ok/],
      ...assets.map((a) => [a, /./]),
      ['/docs/guide', /<h1/],
    ]) {
      const r = await fetch(base + route, { signal: AbortSignal.timeout(5000) });
      const body = await r.text();
      if (r.status !== 200 || !expect.test(body)) throw new Error(`GET ${route}: ${r.status}, expected 200 matching ${expect}`);
      log('check', `GET ${route} 200`);
    }
    if (final.healthcheck) {
      const [cmd, ...args] = containerCommand({ entrypoint: final.healthcheck.command }, stageRoot, []);
      const [hcCmd, hcArgs] = wrap([cmd, ...args]);
      const r = spawnSync(hcCmd, hcArgs, { cwd, env, encoding: 'utf8', timeout: 10_000 });
      if (r.status !== 0) throw new Error(`the HEALTHCHECK command exited with ${r.status ?? r.signal}: ${r.stderr}`);
      log('check', 'HEALTHCHECK command: exit 0');
    }
    // A container is stopped with SIGTERM (docker stop, Kubernetes): the gateway must end by itself.
    t = Date.now();
    server.kill('SIGTERM');
    const stopped = await Promise.race([exit, new Promise((r) => setTimeout(() => r(null), 45_000))]);
    if (!stopped) throw new Error('serve did not exit within 45 s of SIGTERM');
    if (stopped.code !== 0) throw new Error(`serve exited with ${stopped.code ?? stopped.signal} after SIGTERM, expected 0`);
    timings.stop = Date.now() - t;
    log('check', `SIGTERM: exited 0 in ${timings.stop} ms`);
  } finally {
    if (!exited) {
      server.kill('SIGKILL');
      await exit;
    }
  }
  return timings;
}

export async function checkDockerfile({ keep = false } = {}) {
  const started = Date.now();
  const plan = await planDockerfile(readFileSync(path.join(root, 'Dockerfile'), 'utf8'));
  const want = imageNodeVersion(plan);
  if (!process.versions.node.startsWith(`${want}.`) && process.versions.node !== want) {
    log('check', `note: running on Node ${process.versions.node}; the image has Node ${want} (.ci/run runs this under it)`);
  }
  const work = mkdtempSync(path.join(tmpdir(), 'check-dockerfile-'));
  log('check', `stages ${plan.stages.map((s) => s.name).join(', ')} in ${work}`);
  let summary = '';
  // ~1.5 GB in ~50,000 files, mostly the build stage's node_modules: `rm -rf` (quicker than
  // rmSync), started as soon as a stage is no longer needed, so it overlaps the server's checks.
  const remove = (dir) => new Promise((resolve) => spawn('rm', ['-rf', dir], { stdio: 'ignore' }).on('close', resolve).on('error', () => resolve(rmSync(dir, { recursive: true, force: true }))));
  const removals = [];
  try {
    const { stageRoots, skipped } = await buildStages(plan, work).catch((err) => {
      stopRunning();
      throw err;
    });
    const built = Date.now() - started;
    // The runtime stage holds its own links to what it copied from the others.
    if (!keep) for (const s of plan.stages) if (s !== plan.final) removals.push(remove(stageRoots.get(s.name)));
    const timings = await startAndProbe(plan, stageRoots.get(plan.final.name), work);
    summary =
      `stages built in ${(built / 1000).toFixed(1)} s, migrate ${(timings.migrate / 1000).toFixed(1)} s, ready ${(timings.ready / 1000).toFixed(1)} s, ` +
      `stop ${(timings.stop / 1000).toFixed(1)} s; skipped as container-only: ${skipped.length ? skipped.join(' | ') : 'none'}`;
  } finally {
    const t = Date.now();
    if (keep) log('check', `kept ${work}`);
    else {
      await Promise.all(removals);
      await remove(work);
    }
    if (summary) summary += `; clean-up finished ${((Date.now() - t) / 1000).toFixed(1)} s after the checks`;
  }
  log('check', `ok in ${((Date.now() - started) / 1000).toFixed(1)} s: ${summary}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  if (process.argv.includes('--node-version')) {
    console.log(imageNodeVersion(await planDockerfile(readFileSync(path.join(root, 'Dockerfile'), 'utf8'))));
  } else {
    for (const signal of ['SIGINT', 'SIGTERM']) {
      process.once(signal, () => {
        stopRunning();
        process.exit(130);
      });
    }
    try {
      await checkDockerfile({ keep: process.argv.includes('--keep') });
    } catch (err) {
      console.error(`check-dockerfile: ${err.message}`);
      process.exitCode = 1;
    }
  }
}
