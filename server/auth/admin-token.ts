// Which admin tokens an instance accepts. The embedded database (one instance): GATEWAY_ADMIN_TOKEN
// or DATA_DIR/admin-token, as ever. A PostgreSQL deployment: the first instance without
// GATEWAY_ADMIN_TOKEN creates the deployment's token, writes it to its DATA_DIR/admin-token and
// keeps only its SHA-256 in the database, so every instance accepts that one token — the database
// never holds something that opens the admin API (decision 0020).
import { rmSync } from 'node:fs';
import path from 'node:path';
import { constantTimeEqualHex, hashSecret } from '../runtime/secrets.ts';
import { adminToken, dataDirOf, newAdminToken, readSecretFile, writeSecretFile } from '../runtime/data-dir.ts';
import type { SharedSettings } from '../db/shared-settings.ts';

const SETTING = 'admin_token_sha256';

export class AdminTokens {
  /**
   * @param hashes SHA-256 (hex) of every token accepted
   * @param known the token itself, when this instance has it (GATEWAY_ADMIN_TOKEN or its DATA_DIR/admin-token)
   */
  constructor(
    private readonly hashes: readonly string[],
    readonly known: string | null,
  ) {}

  static of(token: string): AdminTokens {
    return new AdminTokens([hashSecret(token)], token);
  }

  /** Compared by hash in constant time, against every accepted one (no early exit). */
  accepts(token: string): boolean {
    const given = hashSecret(token);
    let ok = false;
    for (const h of this.hashes) ok = constantTimeEqualHex(given, h) || ok;
    return ok;
  }
}

/** The accepted tokens, where they came from (for the start-up log), and what the operator should know. */
export type ResolvedAdminTokens = { tokens: AdminTokens; source: string; warnings: string[] };

export async function resolveAdminTokens(env: NodeJS.ProcessEnv, settings: SharedSettings | null): Promise<ResolvedAdminTokens> {
  const dir = dataDirOf(env);
  const file = path.join(dir, 'admin-token');
  if (!settings) {
    return { tokens: AdminTokens.of(adminToken(env, true)!), source: env.GATEWAY_ADMIN_TOKEN ? 'GATEWAY_ADMIN_TOKEN' : `token in ${file} (the CLI reads it)`, warnings: [] };
  }
  const stored = await settings.get(SETTING);
  if (env.GATEWAY_ADMIN_TOKEN) {
    const warnings =
      stored !== null && stored !== hashSecret(env.GATEWAY_ADMIN_TOKEN)
        ? [
            "GATEWAY_ADMIN_TOKEN differs from the deployment's admin token (created by an instance without GATEWAY_ADMIN_TOKEN, its hash kept in the database): each is refused by the other instances. " +
              'Set the same GATEWAY_ADMIN_TOKEN on every instance, or unset it on every instance.',
          ]
        : [];
    return { tokens: AdminTokens.of(env.GATEWAY_ADMIN_TOKEN), source: 'token from GATEWAY_ADMIN_TOKEN', warnings };
  }
  const local = readSecretFile(file);
  if (stored === null) {
    // The first instance: its existing token (a deployment that had one keeps it), or a new one.
    // The file first, its hash second: a process that dies between the two leaves a token in a
    // file that nobody accepts yet (the next start offers it again), never a hash in the database
    // of a token nobody has.
    const token = local ?? newAdminToken();
    if (!local) writeSecretFile(dir, file, token);
    const { created } = await settings.setOnce(SETTING, hashSecret(token));
    if (created) return { tokens: AdminTokens.of(token), source: `token in ${file}, accepted by every instance (its hash is kept in the database)`, warnings: [] };
    // Another instance created it at the same moment: its token is the deployment's; the one just
    // written here would be accepted nowhere, so it goes.
    if (!local) rmSync(file, { force: true });
    return resolveAdminTokens(env, settings);
  }
  if (local === null) {
    return {
      tokens: new AdminTokens([stored], null),
      source: "the deployment's token (in the DATA_DIR/admin-token of the instance that created it; its hash is kept in the database)",
      warnings: [],
    };
  }
  if (hashSecret(local) === stored) return { tokens: AdminTokens.of(local), source: `token in ${file}, accepted by every instance (its hash is kept in the database)`, warnings: [] };
  // A token this DATA_DIR had before the deployment's was kept in the database: still accepted
  // here (scripts using it keep working), but nowhere else.
  return {
    tokens: new AdminTokens([stored, hashSecret(local)], local),
    source: "the deployment's token (its hash is kept in the database), and this DATA_DIR's own",
    warnings: [
      `${file} holds a token only this instance accepts; the deployment's token, accepted by every instance, is in the DATA_DIR/admin-token of the instance that created it. ` +
        'Use that one (copy it over this file), or set the same GATEWAY_ADMIN_TOKEN on every instance.',
    ],
  };
}
