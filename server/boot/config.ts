import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { LineCounter, parseDocument, isMap, isNode, isScalar, type Document } from 'yaml';
import type { z } from 'zod';
import { builtinProviders, configFromEnvironment } from './environment-config.ts';
import { ENVIRONMENT_SOURCE } from './setup.ts';
import { jsonSyntaxError } from '../config/json-position.ts';
import { closest, keysAt } from '../config/schema-keys.ts';
import { vendorIssues } from '../providers/registry.ts';
import { GatewayConfigShape, TrustProxy, defaultPlans, list, referenceIssues, str, type ResolvedConfig } from '../config/schema.ts';
import { credentialProblem } from '../config/placeholders.ts';

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
type Problem = { text: string; line?: number; col?: number };

const dotted = (pathParts: PropertyKey[]) => pathParts.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('').replace(/^\./, '') || '(top level)';

function position(loc: Located, offset: number) {
  const { line, col } = loc.lines!.linePos(offset);
  return { line, col };
}

/** `file:line:col field: message`, at the nearest node that exists (a missing field: the object that lacks it). */
function problemAt(loc: Located, pathParts: PropertyKey[], message: string): Problem {
  if (loc.doc && loc.lines) {
    for (let n = pathParts.length; n >= 0; n--) {
      const node = loc.doc.getIn(pathParts.slice(0, n) as (string | number)[], true);
      if (isNode(node) && node.range) {
        const { line, col } = position(loc, node.range[0]);
        return { text: `${loc.file}:${line}:${col} ${dotted(pathParts)}: ${message}`, line, col };
      }
    }
  }
  return { text: `${loc.file}: ${dotted(pathParts)}: ${message}` };
}

/** An unknown key is reported at the key itself, not at the object holding it. */
function unknownKeyAt(loc: Located, parent: PropertyKey[], key: string): Problem {
  const known = keysAt(GatewayConfigShape, parent);
  const guess = closest(key, known);
  const message = `unknown field (${guess ? `did you mean ${guess}?` : `known: ${known.join(', ')}`})`;
  const map = loc.doc?.getIn(parent as (string | number)[], true) ?? (parent.length ? undefined : loc.doc?.contents);
  const pair = isMap(map) ? map.items.find((p) => isScalar(p.key) && p.key.value === key) : undefined;
  const keyNode = pair && isScalar(pair.key) ? pair.key : undefined;
  if (keyNode?.range && loc.lines) {
    const { line, col } = position(loc, keyNode.range[0]);
    return { text: `${loc.file}:${line}:${col} ${dotted([...parent, key])}: ${message}`, line, col };
  }
  return problemAt(loc, [...parent, key], message);
}

const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

const WHOLE_REF = /^\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}$/;

/**
 * Replaces ${VAR} and ${VAR:-default} in every string; an unset VAR without default is a problem.
 * A field whose whole value is one reference that comes out empty is left out, as if not written,
 * so `public_url: ${PUBLIC_URL:-}` is simply unset when PUBLIC_URL is.
 */
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
    return Object.fromEntries(
      Object.entries(value).flatMap(([k, v]) => {
        const out = interpolate(v, env, [...at, k], problems);
        return out === '' && typeof v === 'string' && WHOLE_REF.test(v) ? [] : [[k, out]];
      }),
    );
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

/** Sign-in providers whose client_id is unset (`${DISCORD_CLIENT_ID:-}`) are off, with a warning. */
function inactiveSignIn(expanded: unknown, loc: Located, warnings: string[]): void {
  const auth = (expanded as { auth?: { providers?: unknown } } | null)?.auth;
  if (!auth || !Array.isArray(auth.providers)) return;
  auth.providers = auth.providers.filter((p: unknown, i: number) => {
    if (!p || typeof p !== 'object' || 'client_id' in p) return true;
    const { id, type } = p as { id?: unknown; type?: unknown };
    const name = typeof id === 'string' ? id : typeof type === 'string' ? type : `#${i}`;
    warnings.push(`${problemAt(loc, ['auth', 'providers', i], `sign-in provider ${name} has no client_id: it is off`).text}`);
    return false;
  });
}

/** The variable a field's value came from: the whole field written `${VAR}` (or `${VAR:-…}`), or a built-in provider's key variable. */
function variableOf(raw: unknown, at: (string | number)[], loc: Located): string | undefined {
  const written = at.reduce<unknown>((v, k) => (v as Record<PropertyKey, unknown> | undefined)?.[k], raw);
  if (typeof written === 'string' && WHOLE_REF.test(written.trim())) return /^\$\{([A-Za-z_][A-Za-z0-9_]*)/.exec(written.trim())![1];
  if (loc.file === ENVIRONMENT_SOURCE && at[0] === 'providers' && typeof written === 'string') {
    const id = (raw as { providers?: { id?: string }[] }).providers?.[at[1] as number]?.id;
    return builtinProviders.find((p) => p.id === id)?.env;
  }
  return undefined;
}

/**
 * Credentials that are a template's placeholder (`REPLACE-ME`, `changeme`, `<your key>`): refused, so
 * a deployment filled in from a template fails at start with the variable to set, not later at
 * the provider. Only placeholders: a short value may be a real (or a test's) key.
 */
function placeholderCredentials(raw: unknown, expanded: unknown, loc: Located): Problem[] {
  const out: Problem[] = [];
  const check = (at: (string | number)[], value: unknown, what: string, unset?: string, keyless = false) => {
    if (typeof value !== 'string') return;
    const variable = variableOf(raw, at, loc);
    const message = credentialProblem(value, what, variable, unset, keyless);
    if (!message) return;
    // A configuration built from the environment has no file to point into: the variable says it all.
    out.push(loc.file === ENVIRONMENT_SOURCE ? { text: message } : problemAt(loc, at, message));
  };
  const cfg = (expanded ?? {}) as Record<string, unknown>;
  const skipped = 'or unset it (a provider without a key is skipped, with a warning; a pool leaves that key out)';
  list(cfg.providers).forEach((p, i) => {
    const what = `${str(p.id) ?? 'a provider'}'s API key`;
    // A provider's key may be what a local server that needs none is given (`EMPTY`, `none`).
    check(['providers', i, 'api_key'], p.api_key, what, skipped, true);
    if (Array.isArray(p.api_keys)) {
      p.api_keys.forEach((k: unknown, j: number) => {
        if (typeof k === 'string') check(['providers', i, 'api_keys', j], k, what, skipped, true);
        else if (k && typeof k === 'object') check(['providers', i, 'api_keys', j, 'key'], (k as { key?: unknown }).key, what, skipped, true);
      });
    }
  });
  const search = cfg.web_search as Record<string, unknown> | undefined;
  if (search && typeof search === 'object') check(['web_search', 'api_key'], search.api_key, 'a search API key');
  const alerts = cfg.budget_alerts as Record<string, unknown> | undefined;
  if (alerts && typeof alerts === 'object') check(['budget_alerts', 'secret'], alerts.secret, 'a signing secret');
  const smtp = cfg.smtp as Record<string, unknown> | undefined;
  if (smtp && typeof smtp === 'object') check(['smtp', 'password'], smtp.password, 'a password');
  const auth = cfg.auth as Record<string, unknown> | undefined;
  list(auth?.providers).forEach((p, i) => check(['auth', 'providers', i, 'client_secret'], p.client_secret, "a sign-in provider's client secret"));
  return out;
}

/** Sign-up settings that load but do not do what they seem to. */
function signupLoadWarnings(cfg: { auth: ResolvedConfig['auth']; smtp?: unknown }, warnings: string[]): void {
  const local = cfg.auth.local;
  if (!local.signup_email_domains.length) return;
  if (local.allow_signup) {
    warnings.push('auth.local.signup_email_domains has no effect while auth.local.allow_signup is true (anyone may sign up): remove one of them');
  } else if (local.enabled && !cfg.smtp) {
    warnings.push(
      'auth.local.signup_email_domains is set but smtp is not: the sign-up form confirms an address by mailing it a link, so it cannot sign anyone up; only sign-in providers (with a verified email) create accounts for those domains. Configure smtp, or invite users (users create, then users reset-link)',
    );
  }
}

function resolve(raw: unknown, loc: Located, env: NodeJS.ProcessEnv): ResolvedConfig {
  const envProblems: [PropertyKey[], string][] = [];
  const expanded = interpolate(raw ?? {}, env, [], envProblems);
  const problems: Problem[] = envProblems.map(([p, m]) => problemAt(loc, p, m));
  const loadWarnings: string[] = [];
  inactiveSignIn(expanded, loc, loadWarnings);
  const parsed = GatewayConfigShape.safeParse(expanded);
  if (!parsed.success) {
    const valueAt = (at: PropertyKey[]) => at.reduce<unknown>((v, k) => (v as Record<PropertyKey, unknown> | undefined)?.[k], expanded);
    for (const i of parsed.error.issues as z.core.$ZodIssue[]) {
      if (i.code === 'unrecognized_keys') {
        for (const key of i.keys) problems.push(unknownKeyAt(loc, i.path, key));
        continue;
      }
      const missing = (i.code === 'invalid_type' || i.code === 'invalid_value') && valueAt(i.path) === undefined;
      problems.push(problemAt(loc, i.path, missing ? `required field missing (${i.message.replace(/^Invalid (input|option): /, '')})` : i.message));
    }
  }
  // Cross-references are checked even when shapes are wrong elsewhere: every mistake in one pass.
  for (const i of [...referenceIssues(expanded), ...vendorIssues(expanded)]) problems.push(problemAt(loc, i.path, i.message));
  problems.push(...placeholderCredentials(raw, expanded, loc));
  // In file order; problems without a position (the environment) first.
  problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.col ?? 0) - (b.col ?? 0));
  const trustProxyProblems: string[] = [];
  const trustProxy = trustProxyFromEnv(env.TRUST_PROXY, trustProxyProblems);
  const all = [...trustProxyProblems, ...problems.map((p) => p.text)];
  if (all.length || !parsed.success) throw new ConfigError(`invalid configuration in ${loc.file}`, all);
  const cfg = parsed.data;
  signupLoadWarnings(cfg, loadWarnings);
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
    jobs: cfg.jobs,
    ledger: cfg.ledger,
    requestLog: cfg.request_log,
    budgetAlerts: cfg.budget_alerts,
    routing: cfg.routing,
    webSearchSurchargeTokens: cfg.web_search_surcharge_tokens,
    budgetUnpricedModels: cfg.budget_unpriced_models,
    webSearch: cfg.web_search,
    auth: cfg.auth,
    catalogMetadata: { ...cfg.catalog_metadata, snapshot: cfg.catalog_metadata.snapshot && path.resolve(path.dirname(loc.file === ENVIRONMENT_SOURCE ? '.' : loc.file), cfg.catalog_metadata.snapshot) },
    publicUrl: cfg.public_url?.replace(/\/+$/, ''),
    smtp: cfg.smtp,
    trustProxy: trustProxy ?? cfg.trust_proxy,
    source: loc.file,
    loadWarnings,
  };
}

/**
 * Parses a config text: JSON when the file name ends in .json, else YAML. Errors point at
 * file:line:column and the field.
 */
export function parseConfig(text: string, file: string, env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  const lines = new LineCounter();
  if (/\.json$/i.test(file)) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      const found = jsonSyntaxError(text);
      if (!found) throw new ConfigError(`cannot parse ${file}`, [`${file}: ${(err as Error).message}`]);
      const { line, col } = lineCol(text, found.offset);
      throw new ConfigError(`cannot parse ${file}`, [`${file}:${line}:${col}: invalid JSON: ${found.message}`]);
    }
    // JSON is YAML: the YAML document gives the positions of fields for the messages.
    const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
    const duplicate = doc.errors.find((e) => e.code === 'DUPLICATE_KEY');
    if (duplicate) {
      const { line, col } = lines.linePos(duplicate.pos[0]);
      throw new ConfigError(`cannot parse ${file}`, [`${file}:${line}:${col}: duplicate key in a JSON object`]);
    }
    return resolve(value, doc.errors.length ? { file } : { doc, lines, file }, env);
  }
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length) {
    throw new ConfigError(
      `cannot parse ${file}`,
      doc.errors.map((e) => {
        const { line, col } = lines.linePos(e.pos[0]);
        return `${file}:${line}:${col}: ${e.message.trim().replace(/:$/, '')}`;
      }),
    );
  }
  return resolve(doc.toJS(), { doc, lines, file }, env);
}

function lineCol(text: string, offset: number): { line: number; col: number } {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, col: before.at(-1)!.length + 1 };
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
  return { config: resolve(config, { file: ENVIRONMENT_SOURCE }, env), enabledFromEnv: enabled };
}
