// The node floor: the least a Node proxy can do — Fastify in, undici (pooled, keep-alive) out,
// the body passed on and the response piped back. What any Node gateway pays at minimum.
import { spawn } from 'node:child_process';
import cluster from 'node:cluster';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { Agent, request } from 'undici';

export async function startNodeFloor(target: string): Promise<{ url: string; close(): Promise<void> }> {
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 256 });
  const app = Fastify({ logger: false });
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.post('/v1/chat/completions', async (req, reply) => {
    const res = await request(`${target}/v1/chat/completions`, { method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body: req.body as Buffer });
    reply.status(res.statusCode).header('content-type', res.headers['content-type'] as string);
    return reply.send(res.body);
  });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url: address, close: () => app.close() };
}

/**
 * The floor in a process of its own, as every other contender runs: sharing the benchmark's event
 * loop would spare it the wake-ups across processes the others pay (and make its CPU time and
 * profile the benchmark's). `BENCH_GATEWAY_NODE_ARGS` applies to it as to the gateway. `workers` > 1:
 * that many processes on one port through node:cluster, as `serve --workers N` runs the gateway.
 */
export async function spawnNodeFloor(target: string, workers = 1, o: { nodeArgs?: string[]; onStdout?: (chunk: Buffer) => void } = {}): Promise<{ url: string; pid: number; close(): Promise<void> }> {
  const nodeArgs = [...(process.env.BENCH_GATEWAY_NODE_ARGS?.split(/\s+/).filter(Boolean) ?? []), ...(o.nodeArgs ?? [])];
  const proc = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', fileURLToPath(import.meta.url), target, String(workers)], { stdio: ['ignore', 'pipe', 'inherit'] });
  // The URL is the line that starts with http (--trace-gc lines may come before it).
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    proc.once('exit', (code) => reject(new Error(`node floor exited (${code})`)));
    proc.stdout!.on('data', (d: Buffer) => {
      o.onStdout?.(d);
      out += d;
      const line = /^http\S+/m.exec(out);
      if (line) resolve(line[0]);
    });
  });
  proc.removeAllListeners('exit');
  return { url, pid: proc.pid!, close: () => new Promise<void>((r) => (proc.once('exit', () => r()), proc.kill('SIGINT'))) };
}

// Run alone (`node --import tsx bench/node-floor.ts <upstream> [workers]`): prints its URL once
// every worker listens.
if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  const workers = Number(process.argv[3] ?? 1);
  if (workers > 1 && cluster.isPrimary) {
    let listening = 0;
    cluster.on('listening', (_w, address) => {
      if (++listening === workers) console.log(`http://127.0.0.1:${address.port}`);
    });
    for (let i = 0; i < workers; i++) cluster.fork();
    process.once('SIGINT', () => {
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGINT');
      cluster.on('exit', () => Object.keys(cluster.workers ?? {}).length || process.exit(0));
    });
  } else {
    // Port 0 in every worker: node:cluster gives them the same port.
    const floor = await startNodeFloor(process.argv[2]!);
    if (cluster.isPrimary) console.log(floor.url);
    // SIGINT ends it normally, so a --cpu-prof profile is written.
    process.once('SIGINT', () => void floor.close().then(() => process.exit(0)));
  }
}
