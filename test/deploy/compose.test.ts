// compose.yaml against the Compose Specification's JSON schema (deploy/schemas/compose-spec.json,
// the one Docker Compose validates with), and what it must agree on with the gateway, the
// Dockerfile and deploy/compose/nginx.conf.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../server/boot/config.ts';
import { deploymentWarnings } from '../../server/config/deployment.ts';
import { hardLimitMs, shutdownTimings } from '../../server/runtime/shutdown.ts';
import { NODE_OWN, configReads, dockerfilePlan, parseYaml, read, root, seconds, serverReads } from './deploy-files.ts';

type Service = {
  image?: string;
  build?: string;
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
  configs?: { source: string; target: string }[];
  healthcheck?: { test: string[] };
  stop_grace_period?: string;
  ports?: string[];
};
const text = read('compose.yaml');
const compose = parseYaml(text) as { services: Record<string, Service>; volumes: Record<string, unknown>; configs: Record<string, { file: string }> };
const { services } = compose;
const gateways = ['gateway-1', 'gateway-2'];
const nginx = read('deploy/compose/nginx.conf');
const plan = await dockerfilePlan();

/** A value as compose interpolates it when only the defaults are known: ${A:-d} → d, ${A:?m} → <A>, $$ → $. */
const interpolate = (v: string) =>
  v.replace(/\$\$|\$\{([A-Z_][A-Z0-9_]*)(?::-([^}]*)|:\?[^}]*)?\}/g, (m, name: string | undefined, dflt: string | undefined) => (m === '$$' ? '$' : dflt ?? `<${name}>`));

describe('compose.yaml', () => {
  it('is valid under the Compose Specification schema, kept unmodified from compose-go v2.13.0', () => {
    const schemaText = read('deploy/schemas/compose-spec.json');
    // deploy/schemas/README.md records where it comes from; an edit must update it.
    expect(createHash('sha256').update(schemaText).digest('hex')).toBe('73ca5878c77570ba222a558016c7b3c6770ba5f3377786593e32180666512f8f');
    expect(read('deploy/schemas/README.md')).toContain('73ca5878c77570ba222a558016c7b3c6770ba5f3377786593e32180666512f8f');
    // strictSchema: a keyword Ajv does not know fails the compile, so nothing of the schema is
    // silently skipped (its union types and bare additionalProperties are fine as they are).
    const ajv = new Ajv2020({ allErrors: true, strictSchema: true, strictTypes: false, strictTuples: false, strictRequired: false });
    const validate = ajv.compile(JSON.parse(schemaText));
    const valid = validate(compose);
    expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 2)).toEqual([]);
    expect(valid).toBe(true);
    // And the schema does catch a slip (a misspelt key, a wrong condition).
    const broken = structuredClone(compose);
    (broken.services['gateway-1'] as Record<string, unknown>).helthcheck = {};
    broken.services['gateway-1']!.depends_on!.migrate!.condition = 'service_completed';
    expect(validate(broken)).toBe(false);
  });

  it('names only volumes and configs it declares, and mounts files that exist', () => {
    for (const [name, s] of Object.entries(services)) {
      for (const v of s.volumes ?? []) {
        const source = v.split(':')[0]!;
        if (source.startsWith('.')) expect(existsSync(path.join(root, source)), `${name}: ${source}`).toBe(true);
        else expect(Object.keys(compose.volumes), `${name}: volume ${source}`).toContain(source);
      }
      for (const c of s.configs ?? []) expect(Object.keys(compose.configs), `${name}: config ${c.source}`).toContain(c.source);
    }
    for (const c of Object.values(compose.configs)) expect(existsSync(path.join(root, c.file)), c.file).toBe(true);
  });

  it('runs two identical gateway replicas, each with a DATA_DIR volume of its own', () => {
    const [a, b] = gateways.map((g) => services[g]!);
    expect(a!.environment).toEqual(b!.environment);
    expect(a!.configs).toEqual(b!.configs);
    expect(a!.depends_on).toEqual(b!.depends_on);
    const dataVolume = (s: Service) => s.volumes!.find((v) => v.endsWith(`:${plan.final.env.DATA_DIR}`))!.split(':')[0];
    expect(new Set([dataVolume(a!), dataVolume(b!)]).size).toBe(2);
    // No replica is published: all traffic comes through nginx, the hop TRUST_PROXY trusts.
    for (const g of gateways) expect(services[g]!.ports).toBeUndefined();
    expect(a!.environment!.TRUST_PROXY).toBe('1');
    expect(nginx).toContain('proxy_set_header X-Forwarded-For $remote_addr;');
  });

  it('migrates once, with the CLI\'s migrate command, before either gateway starts', () => {
    expect(services.migrate!.command).toEqual(['migrate']);
    // One image, built by this service, run by all three.
    expect(services.migrate!.build).toBe('.');
    for (const g of gateways) expect([services[g]!.image, services[g]!.build]).toEqual([services.migrate!.image, undefined]);
    expect(read('server/cli.ts')).toMatch(/\.command\('migrate'\)/);
    expect(services.migrate!.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    expect(services.migrate!.environment!.DATABASE_URL).toBe(services['gateway-1']!.environment!.DATABASE_URL);
    for (const g of gateways) {
      expect(services[g]!.depends_on).toEqual({
        migrate: { condition: 'service_completed_successfully' },
        postgres: { condition: 'service_healthy' },
        redis: { condition: 'service_healthy' },
        'minio-init': { condition: 'service_completed_successfully' },
      });
    }
  });

  it('gives the gateways only variables the server (or its config file) reads, and the shared stores', () => {
    const configFile = compose.configs['gateway-config']!.file;
    const viaConfig = configReads(read(configFile));
    for (const name of [...gateways, 'migrate']) {
      for (const key of Object.keys(services[name]!.environment!)) {
        expect(NODE_OWN.has(key) || serverReads(key) || viaConfig.has(key), `${name}: ${key} is read by the gateway`).toBe(true);
      }
    }
    const env = services['gateway-1']!.environment!;
    // README "PostgreSQL and Redis": what every instance must share.
    expect(interpolate(env.DATABASE_URL!)).toBe('postgres://gateway:<POSTGRES_PASSWORD>@postgres:5432/gateway');
    expect(env.REDIS_URL).toBe('redis://redis:6379');
    expect(interpolate(env.S3_BUCKET!)).toBe('model-gateway');
    expect(env.S3_ENDPOINT).toBe('http://minio:9000');
    expect(env.BLOB_DIR).toBeUndefined();
    // The config file is mounted where GATEWAY_CONFIG points.
    expect(services['gateway-1']!.configs!.map((c) => c.target)).toEqual([env.GATEWAY_CONFIG]);
    // WORKERS is explicit: its default, the machine's cores, would run that many per replica.
    expect(interpolate(env.WORKERS!)).toBe('1');
  });

  it('gives the gateways settings they accept, with nothing one replica holds alone (server/config/deployment.ts)', () => {
    const env = Object.fromEntries(Object.entries(services['gateway-1']!.environment!).map(([k, v]) => [k, interpolate(String(v))]));
    const file = compose.configs['gateway-config']!.file;
    const cfg = parseConfig(read(file), file, env);
    expect(cfg.trustProxy).toBe(1);
    expect(cfg.publicUrl).toBe('http://localhost:8080');
    // The one warning is the reminder that comes with setting GATEWAY_SECRET (the same value on
    // every instance, as both replicas get it here); none about Redis, BLOB_DIR or the token.
    expect(deploymentWarnings(env).map((w) => w.split(':')[0])).toEqual(['GATEWAY_SECRET is set']);
  });

  it('holds no literal secret: each comes from the environment, and compose refuses to start without it', () => {
    const required = new Set<string>();
    for (const [name, s] of Object.entries(services)) {
      for (const [key, value] of Object.entries(s.environment ?? {})) {
        for (const m of String(value).matchAll(/\$\{([A-Z_][A-Z0-9_]*):\?/g)) required.add(m[1]!);
        if (/PASSWORD|SECRET|TOKEN|_KEY$/.test(key)) expect(String(value), `${name}: ${key}`).toMatch(/^\$\{[A-Z_][A-Z0-9_]*(:[-?][^}]*)?\}$/);
      }
    }
    expect([...required].sort()).toEqual(['GATEWAY_SECRET', 'MINIO_ROOT_PASSWORD', 'POSTGRES_PASSWORD', 'S3_SECRET_ACCESS_KEY']);
    // The passwords are spliced into DATABASE_URL, not written there.
    expect(text).not.toMatch(/postgres:\/\/[^:]+:[^$@][^@]*@/);
    // deploy/compose/example.env names each, with no value.
    const example = Object.fromEntries(
      read('deploy/compose/example.env')
        .split('\n')
        .filter((l) => /^[A-Z][A-Z0-9_]*=/.test(l))
        .map((l) => l.split(/=(.*)/).slice(0, 2) as [string, string]),
    );
    for (const name of required) expect(example[name], `example.env: ${name}`).toBe('');
    for (const [name, value] of Object.entries(example)) if (/PASSWORD|SECRET|_API_KEY/.test(name)) expect(value, name).toBe('');
  });

  it('checks the gateways\' health as the image does, and gives them longer to stop than their drain', () => {
    for (const g of gateways) {
      const s = services[g]!;
      expect(s.healthcheck!.test).toEqual(['CMD', ...plan.final.healthcheck!.command]);
      // The gateway's own bound: SHUTDOWN_DELAY_MS + SHUTDOWN_TIMEOUT_MS + its closing.
      const env = Object.fromEntries(Object.entries(s.environment!).map(([k, v]) => [k, interpolate(String(v))]));
      const limit = hardLimitMs(shutdownTimings(env)) / 1000;
      expect(limit).toBe(312);
      expect(seconds(s.stop_grace_period!)).toBeGreaterThan(limit);
      expect(seconds(s.stop_grace_period!)).toBe(330);
    }
  });

  it('balances over both replicas on the image\'s port, retrying the other on connection errors, unbuffered', () => {
    const port = plan.final.expose[0];
    const upstream = /upstream gateway \{([\s\S]*?)\n  \}/.exec(nginx)![1]!;
    expect([...upstream.matchAll(/^\s*server (\S+)/gm)].map((m) => m[1])).toEqual(gateways.map((g) => `${g}:${port}`));
    expect(upstream).toMatch(/zone gateway/); // needed by `resolve`
    // nginx ends idle upstream connections before the gateway would: Fastify's default is 72 s,
    // unless server/app.ts sets its own.
    const own = /keepAliveTimeout:\s*([\d_]+)/.exec(read('server/app.ts'));
    const gatewayIdle = own ? Number(own[1]!.replace(/_/g, '')) / 1000 : 72;
    const nginxIdle = seconds(/keepalive_timeout (\S+);/.exec(upstream)![1]!);
    expect(nginxIdle).toBe(60);
    expect(nginxIdle).toBeLessThan(gatewayIdle);
    for (const line of [
      'proxy_pass http://gateway;',
      'proxy_next_upstream error timeout;',
      'proxy_buffering off;',
      'proxy_read_timeout 3600s;',
      'listen 8080;',
      'resolver 127.0.0.11 valid=5s ipv6=off;',
    ]) {
      expect(nginx).toContain(line);
    }
    expect(services.lb!.volumes).toContain('./deploy/compose/nginx.conf:/etc/nginx/nginx.conf:ro');
    expect(services.lb!.ports).toEqual(['${GATEWAY_PORT:-8080}:8080']);
    // nginx accepts uploads as large as the gateway does (25 MB audio, server/http/audio-upload.ts).
    expect(read('server/http/audio-upload.ts')).toContain('MAX_UPLOAD_BYTES = 25 * 1024 * 1024');
    expect(nginx).toContain('client_max_body_size 26m;');
  });

  it('creates the bucket and a user for it with a script a POSIX shell accepts, granting what the S3 store uses', () => {
    const script = interpolate(services['minio-init']!.command![0]!);
    expect(services['minio-init']!.entrypoint).toEqual(['/bin/sh', '-ec']);
    const syntax = spawnSync('sh', ['-n'], { input: script, encoding: 'utf8' });
    expect(syntax.stderr).toBe('');
    expect(syntax.status).toBe(0);
    // The policy, as its printf line writes it for a bucket.
    const printf = script.split('\n').find((l) => l.startsWith('printf '))!;
    const out = spawnSync('sh', ['-c', printf.replace(/ > \/tmp\/policy\.json$/, '')], { env: { S3_BUCKET: 'b', PATH: process.env.PATH }, encoding: 'utf8' });
    const policy = JSON.parse(out.stdout) as { Statement: { Action: string[]; Resource: string[] }[] };
    expect(policy.Statement).toEqual([
      { Effect: 'Allow', Action: ['s3:ListBucket'], Resource: ['arn:aws:s3:::b'] },
      { Effect: 'Allow', Action: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:AbortMultipartUpload'], Resource: ['arn:aws:s3:::b/*'] },
    ]);
    // Those are the calls server/blobs/s3.ts makes (HeadObject is GetObject's; a missing key is
    // a 404 rather than a 403 only with ListBucket; the multipart upload is PutObject's).
    const s3 = read('server/blobs/s3.ts');
    for (const call of ['HeadObjectCommand', 'GetObjectCommand', 'DeleteObjectCommand', 'upload.Upload']) expect(s3).toContain(call);
  });
});
