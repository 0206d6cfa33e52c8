import path from 'node:path';
import { randomToken } from '../runtime/secrets.ts';
import { dataDirOf, readSecretFile, writeSecretFile } from '../runtime/data-dir.ts';
import type { SharedSettings } from '../db/shared-settings.ts';

/**
 * The gateway's own secret: derives users' stable API keys, signs hosted-file links and sign-in
 * state. Every instance of one deployment needs the same one. GATEWAY_SECRET wins; else, with
 * DATABASE_URL, the one kept in the database (resolveGatewaySecret); else (the embedded database:
 * one instance) a random one kept in DATA_DIR/secret. Changing it changes every stable key.
 */
export function gatewaySecret(env: NodeJS.ProcessEnv): string {
  if (env.GATEWAY_SECRET) return env.GATEWAY_SECRET;
  const dir = dataDirOf(env);
  const file = path.join(dir, 'secret');
  const existing = readSecretFile(file);
  if (existing) return existing;
  const secret = randomToken(64);
  writeSecretFile(dir, file, secret);
  return secret;
}

/** The secret, where it came from (for the start-up log), and what the operator should know. */
export type ResolvedSecret = { secret: string; source: string; warnings: string[] };

const SETTING = 'secret';

/**
 * The secret of a gateway: for a PostgreSQL deployment (`settings` given) every instance without
 * GATEWAY_SECRET uses the one kept in the database, created by the first instance — from its
 * DATA_DIR/secret when it has one, so a deployment that already had a secret keeps its stable keys.
 */
export async function resolveGatewaySecret(env: NodeJS.ProcessEnv, settings: SharedSettings | null): Promise<ResolvedSecret> {
  if (!settings) {
    const secret = gatewaySecret(env);
    return { secret, source: env.GATEWAY_SECRET ? 'GATEWAY_SECRET' : `${path.join(dataDirOf(env), 'secret')} (this instance only)`, warnings: [] };
  }
  const stored = await settings.get(SETTING);
  if (env.GATEWAY_SECRET) {
    const warnings =
      stored !== null && stored !== env.GATEWAY_SECRET
        ? [
            'GATEWAY_SECRET differs from the secret kept in the database, which instances without GATEWAY_SECRET use: hosted-file links, OAuth grants\' keys and sign-in state made by one of them fail on this one. ' +
              'Set the same GATEWAY_SECRET on every instance, or unset it on every instance.',
          ]
        : [];
    return { secret: env.GATEWAY_SECRET, source: 'GATEWAY_SECRET', warnings };
  }
  const file = path.join(dataDirOf(env), 'secret');
  const local = readSecretFile(file);
  if (stored !== null) {
    const warnings =
      local !== null && local !== stored ? [`${file} is not used: this deployment's secret is kept in the database, shared by every instance. Remove the file to silence this.`] : [];
    return { secret: stored, source: 'the database (shared by every instance)', warnings };
  }
  const { value, created } = await settings.setOnce(SETTING, local ?? randomToken(64));
  if (!created) return resolveGatewaySecret(env, settings);
  return { secret: value, source: `the database (created by this instance${local ? ` from ${file}` : ''}; shared by every instance)`, warnings: [] };
}
