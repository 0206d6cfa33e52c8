import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { LineCounter, parseDocument, isNode, type Document } from 'yaml';
import type { z } from 'zod';
import { configFromEnvironment } from './defaults.ts';
import { GatewayConfig, TrustProxy, defaultPlans, type ResolvedConfig } from './schema.ts';

export class ConfigError extends Error {
  constructor(
    message: string,
    readonly problems: string[],
  ) {
    super(`${message}\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Located = { doc?: Document; lines?: LineCounter; file: string };

function where(loc: Located, pathParts: PropertyKey[]): string {
  const dotted = pathParts.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('').replace(/^\./, '');
  if (!loc.doc || !loc.lines) return `${loc.file}: ${dotted || '(top level)'}`;
  // The nearest node that exists: a missing field is reported at the object that lacks it.
  for (let n = pathParts.length; n >= 0; n--) {
    const node = loc.doc.getIn(pathParts.slice(0, n) as (string | number)[], true);
    if (isNode(node) && node.range) {
      const { line, col } = loc.lines.linePos(node.range[0]);
      return `${loc.file}:${line}:${col} ${dotted || '(top level)'}`;
    }
  }
  return `${loc.file}: ${dotted}`;
}

const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Replaces ${VAR} and ${VAR:-default} in every string; an unset VAR without default is a problem. */
function interpolate(value: unknown, env: NodeJS.ProcessEnv, at: PropertyKey[], problems: [PropertyKey[], string][]): unknown {
  if (typeof value === 'string') {
    return value.replace(ENV_REF, (_m, name: string, fallback: string | undefined) => {
      const v = env[name];
      if (v !== undefined && v !== '') return v;
      if (fallback !== undefined) return fallback;
      problems.push([at, `environment variable ${name} is not set (write \${${name}:-} to allow it to be empty)`]);
      return '';
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolate(v, env, [...at, i], problems));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env, [...at, k], problems)]));
  }
  return value;
}

/** TRUST_PROXY: true, false, a hop count, or comma-separated addresses / CIDR ranges. */
function trustProxyFromEnv(value: string | undefined, problems: string[]): TrustProxy | undefined {
  if (!value) return undefined;
  const candidate = value === 'true' ? true : value === 'false' ? false : /^\d+$/.test(value) ? Number(value) : value.split(',').map((a) => a.trim());
  const parsed = TrustProxy.safeParse(candidate);
  if (!parsed.success) problems.push(`TRUST_PROXY=${value}: ${parsed.error.issues[0]!.message}`);
  return parsed.data;
}

function resolve(raw: unknown, loc: Located, env: NodeJS.ProcessEnv): ResolvedConfig {
  const envProblems: [PropertyKey[], string][] = [];
  const expanded = interpolate(raw ?? {}, env, [], envProblems);
  const problems = envProblems.map(([p, m]) => `${where(loc, p)}: ${m}`);
  const trustProxy = trustProxyFromEnv(env.TRUST_PROXY, problems);
  const parsed = GatewayConfig.safeParse(expanded);
  if (!parsed.success) {
    const valueAt = (at: PropertyKey[]) => at.reduce<unknown>((v, k) => (v as Record<PropertyKey, unknown> | undefined)?.[k], expanded);
    problems.push(
      ...parsed.error.issues.map((i: z.core.$ZodIssue) => {
        const missing = (i.code === 'invalid_type' || i.code === 'invalid_value') && valueAt(i.path) === undefined;
        return `${where(loc, i.path)}: ${missing ? `required field missing (${i.message.replace(/^Invalid (input|option): /, '')})` : i.message}`;
      }),
    );
  }
  if (problems.length || !parsed.success) throw new ConfigError(`invalid configuration in ${loc.file}`, problems);
  const cfg = parsed.data;
  const plans = [...(cfg.plans ?? defaultPlans)].sort((a, b) => a.rank - b.rank);
  const lowest = plans[0]!.id;
  return {
    providers: cfg.providers,
    models: cfg.models.map((m) => ({ ...m, required_plan: m.required_plan ?? lowest })),
    plans,
    defaultPlan: cfg.default_plan ?? lowest,
    keyCacheTtlMs: cfg.key_cache_ttl_ms,
    allowPrivateImageUrls: cfg.allow_private_image_urls,
    drainMs: cfg.client_disconnect_drain_ms,
    reservationTtlMs: cfg.reservation_ttl_ms,
    webSearchSurchargeTokens: cfg.web_search_surcharge_tokens,
    webSearch: cfg.web_search,
    auth: cfg.auth,
    catalogMetadata: { ...cfg.catalog_metadata, snapshot: cfg.catalog_metadata.snapshot && path.resolve(path.dirname(loc.file === '(environment)' ? '.' : loc.file), cfg.catalog_metadata.snapshot) },
    publicUrl: cfg.public_url?.replace(/\/+$/, ''),
    trustProxy: trustProxy ?? cfg.trust_proxy,
    source: loc.file,
  };
}

/** Parses a YAML or JSON config text; errors point at file:line:column and the field. */
export function parseConfig(text: string, file: string, env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length) {
    throw new ConfigError(
      `cannot parse ${file}`,
      doc.errors.map((e) => {
        const pos = e.linePos?.[0];
        return `${file}${pos ? `:${pos.line}:${pos.col}` : ''}: ${e.message.split('\n')[0]}`;
      }),
    );
  }
  return resolve(doc.toJS(), { doc, lines, file }, env);
}

export type LoadedConfig = { config: ResolvedConfig; enabledFromEnv: string[] | null };

/**
 * GATEWAY_CONFIG, else ./gateway.config.yaml when present, else built-in providers enabled by the
 * API keys found in the environment.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): LoadedConfig {
  const explicit = env.GATEWAY_CONFIG;
  const file = explicit ? path.resolve(cwd, explicit) : path.join(cwd, 'gateway.config.yaml');
  if (existsSync(file)) return { config: parseConfig(readFileSync(file, 'utf8'), file, env), enabledFromEnv: null };
  if (explicit) throw new ConfigError('cannot read the configuration', [`GATEWAY_CONFIG=${explicit}: no such file`]);
  const { config, enabled } = configFromEnvironment(env);
  return { config: resolve(config, { file: '(environment)' }, env), enabledFromEnv: enabled };
}
