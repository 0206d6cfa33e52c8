// Fast mock upstreams: nginx answering fixed bodies (non-streaming), a small Node server for SSE.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const CHAT_BODY = JSON.stringify({
  id: 'chatcmpl-bench', object: 'chat.completion', created: 1770933883, model: 'gpt-4o-mini-2024-07-18',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello! How can I help you today?', refusal: null }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 },
});
export const MESSAGES_BODY = JSON.stringify({
  id: 'msg_bench', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: 'Hello! How can I help you today?' }],
  stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 12, output_tokens: 9 },
});

export const hasBinary = (name: string) => spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function waitFor(url: string) {
  for (let i = 0; i < 100; i++) {
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`${url} did not come up`);
}

const escapeNginx = (s: string) => s.replace(/\\/g, '\\\\').replace(/'/g, "\\'");

/** nginx serving fixed bodies on one port and, on another, proxying to `proxyTo` with keep-alive. */
export async function startNginx(proxyTo?: string): Promise<{ url: string; proxyUrl?: string; proc: ChildProcess; close(): void }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'mg-bench-nginx-'));
  mkdirSync(path.join(dir, 'logs'));
  const port = await freePort();
  const proxyPort = await freePort();
  const upstream = proxyTo ? new URL(proxyTo) : null;
  writeFileSync(
    path.join(dir, 'nginx.conf'),
    `worker_processes 1; error_log ${dir}/logs/error.log; pid ${dir}/nginx.pid; daemon off;
events { worker_connections 4096; }
http {
  access_log off; keepalive_requests 1000000; client_body_temp_path ${dir}; proxy_temp_path ${dir};
  server { listen 127.0.0.1:${port};
    location = /v1/chat/completions { default_type application/json; return 200 '${escapeNginx(CHAT_BODY)}'; }
    location = /v1/messages { default_type application/json; return 200 '${escapeNginx(MESSAGES_BODY)}'; }
  }
  ${upstream ? `upstream mock { server ${upstream.host}; keepalive 64; }
  server { listen 127.0.0.1:${proxyPort};
    location / { proxy_pass http://mock; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }` : ''}
}`,
  );
  const proc = spawn('nginx', ['-p', dir, '-c', path.join(dir, 'nginx.conf')], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/`);
  if (upstream) await waitFor(`http://127.0.0.1:${proxyPort}/`);
  return { url, proxyUrl: upstream ? `http://127.0.0.1:${proxyPort}` : undefined, proc, close: () => proc.kill('SIGTERM') };
}

/** A Node mock: fixed JSON bodies, and SSE streams of `chunks` chat chunks for `stream: true`. */
export async function startNodeMock(chunks = 200): Promise<{ url: string; close(): Promise<void> }> {
  const chunk = (i: number) => `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: `tok${i} ` }, finish_reason: null }] })}\n\n`;
  const last =
    `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n` +
    `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 12, completion_tokens: chunks, total_tokens: 12 + chunks } })}\n\ndata: [DONE]\n\n`;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => void (async () => {
      if (!body.includes('"stream":true')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(req.url?.endsWith('/messages') ? MESSAGES_BODY : CHAT_BODY);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < chunks; i++) {
        if (!res.write(chunk(i))) await new Promise((r) => res.once('drain', r));
        if (i % 20 === 19) await new Promise((r) => setImmediate(r));
      }
      res.end(last);
    })());
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(() => r())) };
}
