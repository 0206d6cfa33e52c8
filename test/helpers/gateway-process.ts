// Starts test/helpers/gateway-child.ts: a gateway whose crash a test can observe (its exit code)
// instead of dying with it.
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { freshDataDir } from './gateway.ts';
import { ENGINE_FLAGS } from './engine-flags.ts';

export type GatewayProcess = {
  url: string;
  keys: string[];
  child: ChildProcess;
  /** What the process wrote to stderr so far (its logs, or the crash). */
  stderr(): string;
  /** Still running: no exit, no signal. */
  alive(): boolean;
  close(): Promise<void>;
};

export async function spawnGateway(opts: { config: string; env?: NodeJS.ProcessEnv; keys?: number }): Promise<GatewayProcess> {
  const dataDir = freshDataDir();
  const configPath = path.join(dataDir, 'gateway.config.yaml');
  writeFileSync(configPath, opts.config);
  const child = spawn(process.execPath, [...ENGINE_FLAGS, '--import', 'tsx', path.join(import.meta.dirname, 'gateway-child.ts')], {
    env: { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', GATEWAY_CONFIG: configPath, GATEWAY_METADATA_FETCH: 'off', GATEWAY_TEST_KEYS: String(opts.keys ?? 2), ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stderr!.on('data', (d) => (log += d));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    void exited.then(() => reject(new Error(`the gateway process exited: ${log}`)));
  });
  const { url, keys } = JSON.parse(line) as { url: string; keys: string[] };
  return {
    url,
    keys,
    child,
    stderr: () => log,
    alive: () => child.exitCode === null && child.signalCode === null,
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
