// What the deployment tests share: the files under test, read once, and the facts of the
// server they are checked against (which variables it reads, which routes it has).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';
// @ts-expect-error: a plain ES module without types
import { planDockerfile } from '../../scripts/check-dockerfile.mjs';

export const root = fileURLToPath(new URL('../../', import.meta.url));
export const read = (rel: string) => readFileSync(path.join(root, rel), 'utf8');

/** YAML as Compose reads it: anchors, and `<<` merge keys. */
export const parseYaml = (text: string) => parse(text, { merge: true });
export const parseYamlDocuments = (text: string) =>
  parseAllDocuments(text, { merge: true }).map((d) => {
    if (d.errors.length) throw new Error(d.errors.map((e) => e.message).join('; '));
    return d.toJS() as Record<string, any>;
  });

export type Step = { kind: 'workdir' | 'copy' | 'run'; line: number; dir?: string; from?: string | null; sources?: string[]; dest?: string; command?: string; containerOnly?: boolean };
export type Stage = {
  name: string;
  image: string;
  env: Record<string, string>;
  workdir: string;
  user: string | null;
  steps: Step[];
  entrypoint: string[] | null;
  cmd: string[] | null;
  healthcheck: { options: Record<string, string>; command: string[] } | null;
  expose: string[];
};
export type Plan = { globalArgs: Record<string, string>; stages: Stage[]; final: Stage };

/** A Dockerfile's text as scripts/check-dockerfile.mjs plans it (it throws on what it cannot run). */
export const planDockerfileText = async (text: string): Promise<Plan> => planDockerfile(text);
/** The Dockerfile as scripts/check-dockerfile.mjs runs it. */
export const dockerfilePlan = async (): Promise<Plan> => planDockerfileText(read('Dockerfile'));

// ---- the server's side -------------------------------------------------------------------------

function sources(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (p !== path.join(root, 'server/db/generated')) sources(p, out);
    } else if (/\.(ts|mjs)$/.test(e.name)) {
      out.push(p);
    }
  }
  return out;
}
let serverText: string | null = null;
/** The server's sources, without comments (a variable named in a comment is not one it reads). */
function server(): string {
  serverText ??= sources(path.join(root, 'server'))
    // Block comments that open a line, and line comments (not `//` inside a URL or a string).
    .map((f) => readFileSync(f, 'utf8').replace(/^\s*\/\*[\s\S]*?\*\//gm, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1'))
    .join('\n');
  return serverText;
}

/**
 * Whether the server reads environment variable `name`: as `env.NAME`, `env['NAME']`, or the
 * name in quotes (`envMs(env, 'NAME', …)`, a provider's `env: 'NAME'`).
 */
export function serverReads(name: string): boolean {
  const n = name.replace(/[^A-Z0-9_]/g, '');
  return new RegExp(`env\\.${n}\\b|env\\[['"]${n}['"]\\]|['"]${n}['"]`).test(server());
}

/** Variables a config file reads through ${NAME} / ${NAME:-…}. */
export const configReads = (text: string) => new Set([...text.matchAll(/\$\{([A-Z_][A-Z0-9_]*)(?::-[^}]*)?\}/g)].map((m) => m[1]!));

/** GET paths of the generated OpenAPI document (the contract's routes). */
export function getRoutes(): Set<string> {
  const doc = JSON.parse(read('openapi/openapi.json')) as { paths: Record<string, Record<string, unknown>> };
  return new Set(Object.entries(doc.paths).filter(([, ops]) => 'get' in ops).map(([p]) => p));
}

/** Variables of the environment that Node or its libraries read, not the gateway. */
export const NODE_OWN = new Set(['NODE_ENV', 'NODE_OPTIONS']);

/** A Go/Compose/Kubernetes duration ("330s", "5m", "1m30s") in seconds. */
export function seconds(d: string | number): number {
  if (typeof d === 'number') return d;
  let total = 0;
  const re = /(\d+(?:\.\d+)?)(h|ms|m|s)/g;
  let matched = '';
  for (const m of d.matchAll(re)) {
    matched += m[0];
    total += Number(m[1]) * { h: 3600, m: 60, s: 1, ms: 0.001 }[m[2] as 'h' | 'm' | 's' | 'ms'];
  }
  if (matched !== d) throw new Error(`not a duration: ${d}`);
  return total;
}
