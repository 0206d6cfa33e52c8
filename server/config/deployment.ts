// What `serve` logs as warnings at start-up and `config check` reports about the environment of
// a deployment of several instances: settings that each instance has on its own while others
// are shared (README "PostgreSQL and Redis", decision 0020). Only what the environment shows:
// that two instances agree (the same BLOB_DIR mounted, the same GATEWAY_SECRET) cannot be seen
// from one of them, so such settings are named with what they must be.
export function deploymentWarnings(env: NodeJS.ProcessEnv): string[] {
  const warnings: string[] = [];
  const shared = Boolean(env.DATABASE_URL);
  if (shared && !env.REDIS_URL) {
    warnings.push(
      'DATABASE_URL is set but REDIS_URL is not: rate limits, daily quotas and job slots are counted in this process only, so with several instances each enforces them on its own ' +
        '(N instances allow N times a plan). Set the same REDIS_URL on every instance.',
    );
  }
  if (!shared && env.REDIS_URL) {
    warnings.push(
      'REDIS_URL is set but DATABASE_URL is not: the embedded database serves this one process (its users, keys, jobs and outputs are not seen by another instance). ' +
        'Several instances need the same DATABASE_URL (PostgreSQL) as well.',
    );
  }
  if (env.S3_BUCKET && env.BLOB_DIR) warnings.push(`BLOB_DIR (${env.BLOB_DIR}) is not used: S3_BUCKET is set, and uploads and job outputs go to the bucket.`);
  if (shared && env.BLOB_DIR && !env.S3_BUCKET) {
    warnings.push(
      `BLOB_DIR (${env.BLOB_DIR}) keeps uploads and job outputs: every instance must have this same directory mounted (a shared file system), or jobs submitted on one instance fail on another. ` +
        'Unset BLOB_DIR to keep them in PostgreSQL, or set S3_BUCKET.',
    );
  }
  if (shared && env.GATEWAY_SECRET) {
    warnings.push(
      'GATEWAY_SECRET is set: every instance needs this same value (hosted-file links, OAuth grants\' keys and sign-in state made by one are checked by the others). ' +
        'Unset it on every instance to share the secret kept in the database instead.',
    );
  }
  if (shared && env.GATEWAY_ADMIN_TOKEN) {
    warnings.push(
      'GATEWAY_ADMIN_TOKEN is set: only the instances with this same value accept it. Unset it on every instance to share the token the first instance created (its hash is kept in the database).',
    );
  }
  return warnings;
}
