import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomToken } from '../auth/secrets.ts';
import { dataDirOf } from './data-dir.ts';

/**
 * The gateway's own secret: derives users' stable API keys and signs sign-in state. Every
 * instance of one deployment needs the same one (GATEWAY_SECRET); without it a random secret is
 * kept in DATA_DIR/secret. Changing it changes every stable key.
 */
export function gatewaySecret(env: NodeJS.ProcessEnv): string {
  if (env.GATEWAY_SECRET) return env.GATEWAY_SECRET;
  const dir = dataDirOf(env);
  const file = path.join(dir, 'secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dir, { recursive: true });
  const secret = randomToken(64);
  writeFileSync(file, secret + '\n', { mode: 0o600, flag: 'wx' });
  return secret;
}
