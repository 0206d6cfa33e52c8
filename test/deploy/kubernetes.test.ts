// deploy/kubernetes/ against Kubernetes' own schemas (the kubernetes-models package: the API's
// OpenAPI schemas of Kubernetes 1.36, compiled by Ajv), with unknown fields refused as
// `kubectl apply` refuses them, and what the manifests must agree on with the gateway.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../server/boot/config.ts';
import { deploymentWarnings } from '../../server/config/deployment.ts';
import { hardLimitMs, shutdownTimings } from '../../server/runtime/shutdown.ts';
import { NODE_OWN, configReads, dockerfilePlan, getRoutes, parseYaml, parseYamlDocuments, read, root, serverReads } from './deploy-files.ts';

type Manifest = { file: string; doc: Record<string, any> };
const dir = 'deploy/kubernetes';
const kustomization = parseYaml(read(`${dir}/kustomization.yaml`)) as { resources: string[]; images: { name: string; newName: string; newTag: string }[] };
const manifests: Manifest[] = kustomization.resources.flatMap((file) => parseYamlDocuments(read(`${dir}/${file}`)).map((doc) => ({ file, doc })));
const one = (kind: string) => {
  const found = manifests.filter((m) => m.doc.kind === kind);
  expect(found, kind).toHaveLength(1);
  return found[0]!.doc;
};
const deployment = one('Deployment');
const job = one('Job');
const secret = one('Secret');
const configMap = one('ConfigMap');
const pod = deployment.spec.template.spec;
const gateway = pod.containers[0];
const envOf = (container: { env?: { name: string; value?: string }[] }) => Object.fromEntries((container.env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
const plan = await dockerfilePlan();

/** kubernetes-models' module for a resource: kubernetes-models/<group/version>/<Kind>. */
const modelPath = (doc: Record<string, any>) => `kubernetes-models/${doc.apiVersion}/${doc.kind}`;

describe('deploy/kubernetes', () => {
  it('lists every manifest of the directory in kustomization.yaml', () => {
    const files = readdirSync(path.join(root, dir)).filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml');
    expect([...kustomization.resources].sort()).toEqual(files.sort());
    expect(manifests.map((m) => m.doc.kind).sort()).toEqual(['ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'Job', 'PodDisruptionBudget', 'Secret', 'Service', 'ServiceAccount']);
    expect(manifests.map((m) => m.doc.apiVersion).sort()).toEqual(['apps/v1', 'autoscaling/v2', 'batch/v1', 'policy/v1', 'v1', 'v1', 'v1', 'v1']);
  });

  it('validates against the Kubernetes 1.36 schemas', async () => {
    for (const { file, doc } of manifests) {
      const Model = (await import(modelPath(doc)))[doc.kind] as new (d: unknown) => { validate(): void };
      expect(() => new Model(doc).validate(), `${file}: ${doc.kind}`).not.toThrow();
    }
    // And they do catch a slip.
    const { Deployment } = await import('kubernetes-models/apps/v1/Deployment');
    const broken = structuredClone(deployment);
    broken.spec.template.spec.containers[0].ports[0].containerPort = '8080';
    expect(() => new Deployment(broken).validate()).toThrow(/containerPort must be integer/);
  });

  it('has no field the API does not know (kubectl apply --validate=strict)', () => {
    // The schemas allow unknown fields; the models' TypeScript types do not: each manifest, as
    // an object literal of its kind's type, must type-check (excess properties are errors).
    const file = path.join(root, 'test/deploy/__manifests__.ts');
    const check = (docs: Manifest[]) => {
      const imports = [...new Set(docs.map((m) => `import type { I${m.doc.kind} } from '${modelPath(m.doc)}';`))];
      const starts: number[] = [];
      let source = `${imports.join('\n')}\n`;
      docs.forEach(({ doc }, i) => {
        starts.push(source.split('\n').length);
        source += `export const m${i}: I${doc.kind} = ${JSON.stringify(doc, null, 2)};\n`;
      });
      // ES5's lib is all the models' types need, and the least to parse.
      const options: ts.CompilerOptions = { strict: true, noEmit: true, skipLibCheck: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, types: [], lib: ['lib.es5.d.ts'] };
      const host = ts.createCompilerHost(options);
      const getSourceFile = host.getSourceFile.bind(host);
      host.getSourceFile = (name, version, ...rest) => (name === file ? ts.createSourceFile(name, source, version) : getSourceFile(name, version, ...rest));
      const fileExists = host.fileExists.bind(host);
      host.fileExists = (name) => name === file || fileExists(name);
      const program = ts.createProgram([file], options, host);
      return ts.getPreEmitDiagnostics(program).map((d) => {
        const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
        const i = starts.findLastIndex((s) => s <= line);
        const where = i >= 0 ? `${docs[i]!.file} ${docs[i]!.doc.kind}/${docs[i]!.doc.metadata?.name}` : 'imports';
        return `${where}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
      });
    };
    // One program (type-checking is the slow part): the manifests, and a copy of the Deployment
    // with a misspelt field, the one error expected.
    const typo = structuredClone(manifests.find((m) => m.doc.kind === 'Deployment')!);
    typo.file = 'a misspelt copy of deployment.yaml';
    typo.doc.spec.template.spec.containers[0].readinesProbe = typo.doc.spec.template.spec.containers[0].readinessProbe;
    const errors = check([...manifests, typo]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^a misspelt copy of deployment.yaml Deployment\/model-gateway: .*'"readinesProbe"' does not exist in type 'IContainer'/);
  });

  it('probes routes the gateway has, on the port the image exposes', () => {
    const routes = getRoutes();
    expect(gateway.readinessProbe.httpGet.path).toBe('/readyz');
    expect(gateway.livenessProbe.httpGet.path).toBe('/healthz');
    expect(gateway.startupProbe.httpGet.path).toBe('/healthz');
    for (const probe of [gateway.readinessProbe, gateway.livenessProbe, gateway.startupProbe]) {
      expect(routes, probe.httpGet.path).toContain(probe.httpGet.path);
      expect(probe.httpGet.port).toBe('http');
    }
    expect(gateway.ports).toEqual([{ name: 'http', containerPort: Number(plan.final.expose[0]), protocol: 'TCP' }]);
    expect(String(gateway.ports[0].containerPort)).toBe(plan.final.env.PORT);
    const service = one('Service');
    expect(service.spec.ports[0].targetPort).toBe('http');
  });

  it('selects the Deployment\'s pods everywhere it is named', () => {
    const labels = deployment.spec.template.metadata.labels;
    expect(deployment.spec.selector.matchLabels).toEqual(labels);
    expect(one('Service').spec.selector).toEqual(labels);
    expect(one('PodDisruptionBudget').spec.selector.matchLabels).toEqual(labels);
    expect(pod.topologySpreadConstraints[0].labelSelector.matchLabels).toEqual(labels);
    const hpa = one('HorizontalPodAutoscaler');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: deployment.apiVersion, kind: 'Deployment', name: deployment.metadata.name });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    // The HPA owns the replica count.
    expect(deployment.spec.replicas).toBeUndefined();
    // The migration Job's pods are not the gateway's (not behind the Service, not in the budget).
    expect(job.spec.template.metadata.labels['app.kubernetes.io/component']).not.toBe(labels['app.kubernetes.io/component']);
  });

  it('serves with `serve` and migrates once with the CLI\'s `migrate`, from one image', () => {
    expect(gateway.args).toEqual(['serve']);
    expect(job.spec.template.spec.containers[0].args).toEqual(['migrate']);
    const cli = read('server/cli.ts');
    expect(cli).toMatch(/\.command\('serve'\)/);
    expect(cli).toMatch(/\.command\('migrate'\)/);
    expect(job.spec.template.spec.restartPolicy).toBe('Never');
    expect(job.spec.template.spec.containers[0].image).toBe(gateway.image);
    expect(kustomization.images.map((i) => i.name)).toEqual([gateway.image]);
    // Migrating concurrently with starting pods is safe: one advisory lock serialises them.
    expect(read('server/db/client.ts')).toContain("SELECT pg_advisory_lock(");
  });

  it('runs as the image\'s non-root user with a read-only root file system', () => {
    const [uid, gid] = plan.final.user!.split(':').map(Number);
    for (const spec of [pod, job.spec.template.spec]) {
      expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: uid, runAsGroup: gid });
      expect(spec.automountServiceAccountToken).toBe(false);
      const c = spec.containers[0];
      expect(c.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
      // What it writes goes to volumes: DATA_DIR and /tmp.
      const mounts = c.volumeMounts.map((m: { mountPath: string }) => m.mountPath);
      expect(mounts).toContain(envOf(c).DATA_DIR);
      expect(mounts).toContain('/tmp');
    }
  });

  it('stops within the grace period: preStop sleep, then the gateway\'s whole drain', () => {
    const env = envOf(gateway);
    const drain = hardLimitMs(shutdownTimings(env)) / 1000;
    const preStop = gateway.lifecycle.preStop.sleep.seconds;
    expect(preStop).toBe(10);
    expect(Number(env.SHUTDOWN_TIMEOUT_MS)).toBe(300_000);
    expect(drain).toBe(312);
    expect(pod.terminationGracePeriodSeconds).toBe(330);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(preStop + drain);
    // A hung process is not given the planned stop's long grace.
    expect(gateway.livenessProbe.terminationGracePeriodSeconds).toBeLessThanOrEqual(30);
  });

  it('sets only variables the gateway reads, WORKERS explicitly, and takes secrets from the Secret', () => {
    const config = configMap.data['gateway.config.yaml'] as string;
    const viaConfig = configReads(config);
    for (const c of [gateway, job.spec.template.spec.containers[0]]) {
      for (const e of c.env as { name: string }[]) expect(NODE_OWN.has(e.name) || serverReads(e.name) || viaConfig.has(e.name), `${c.name}: ${e.name}`).toBe(true);
    }
    for (const key of Object.keys(secret.stringData)) expect(serverReads(key) || viaConfig.has(key), `Secret key ${key} is read by the gateway`).toBe(true);
    expect(envOf(gateway).WORKERS).toBe('1');
    expect(gateway.envFrom).toEqual([{ secretRef: { name: secret.metadata.name } }]);
    const ref = job.spec.template.spec.containers[0].env.find((e: { name: string }) => e.name === 'DATABASE_URL').valueFrom.secretKeyRef;
    expect(ref).toEqual({ name: secret.metadata.name, key: 'DATABASE_URL' });
    // The shared stores (README "PostgreSQL and Redis") and the shared secret.
    for (const key of ['DATABASE_URL', 'REDIS_URL', 'GATEWAY_SECRET']) expect(Object.keys(secret.stringData)).toContain(key);
    expect(envOf(gateway).S3_BUCKET).toBeTruthy();
  });

  it('commits no secret: every Secret value is a placeholder', () => {
    for (const [key, value] of Object.entries(secret.stringData as Record<string, string>)) expect(value, key).toContain('REPLACE-ME');
    expect(secret.data).toBeUndefined();
  });

  it('mounts deploy/gateway.config.yaml, which the gateway loads, where GATEWAY_CONFIG points', () => {
    const config = configMap.data['gateway.config.yaml'] as string;
    expect(config).toBe(read('deploy/gateway.config.yaml'));
    const volume = pod.volumes.find((v: { configMap?: { name: string } }) => v.configMap?.name === configMap.metadata.name);
    const mount = gateway.volumeMounts.find((m: { name: string }) => m.name === volume.name);
    expect(mount.readOnly).toBe(true);
    expect(envOf(gateway).GATEWAY_CONFIG).toBe(`${mount.mountPath}/gateway.config.yaml`);
    // The pod's environment: the Secret's keys (placeholders) and the Deployment's settings.
    const env = { ...Object.fromEntries(Object.keys(secret.stringData).map((k) => [k, 'x'])), ...envOf(gateway) };
    const cfg = parseConfig(config, 'deploy/gateway.config.yaml', env);
    expect(cfg.providers.map((p) => p.id)).toEqual(['openai', 'anthropic', 'gemini', 'openrouter']);
    expect(cfg.trustProxy).toEqual(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16']);
    expect(cfg.publicUrl).toBe('https://gateway.example.com');
    // Nothing one pod holds alone (server/config/deployment.ts): the one warning is the reminder
    // that comes with GATEWAY_SECRET, which every pod takes from the same Secret.
    expect(deploymentWarnings(env).map((w) => w.split(':')[0])).toEqual(['GATEWAY_SECRET is set']);
    // Each provider's key comes from the Secret.
    for (const name of configReads(config)) if (name.endsWith('_API_KEY')) expect(Object.keys(secret.stringData)).toContain(name);
  });
});
