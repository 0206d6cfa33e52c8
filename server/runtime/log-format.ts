// Where logs go and how they look: JSON lines for machines (the default when stdout is not a
// terminal), one readable, coloured line per event for a person at a terminal. LOG_FORMAT forces either.
import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';
import { redactHeldSecrets } from './held-secrets.ts';

export type LogFormat = 'json' | 'pretty';

export function logFormat(env: NodeJS.ProcessEnv, isTTY = process.stdout.isTTY === true): LogFormat {
  const v = env.LOG_FORMAT?.trim().toLowerCase();
  if (v === 'json' || v === 'pretty') return v;
  if (v) throw new Error(`LOG_FORMAT must be 'json' or 'pretty', not '${env.LOG_FORMAT}'.`);
  return isTTY ? 'pretty' : 'json';
}

/**
 * A pino logger in the format `env` asks for (LOG_LEVEL, LOG_FORMAT, NO_COLOR), secrets redacted:
 * credential headers by path, and every secret the process holds by value in the line as written
 * (an error's message or stack may quote one, in any field).
 */
export function createLogger(env: NodeJS.ProcessEnv, redact: string[], destination?: pino.DestinationStream): Logger {
  const options = { level: env.LOG_LEVEL ?? 'info', redact: { paths: redact, censor: '[redacted]' }, hooks: { streamWrite: redactHeldSecrets } };
  if (destination) return pino(options, destination);
  if (logFormat(env) === 'json') return pino(options);
  // In-process and synchronous (not a worker transport): what is printed before an exit is never lost.
  const stream = pretty({
    colorize: process.stdout.isTTY === true && !env.NO_COLOR,
    translateTime: 'SYS:HH:MM:ss.l',
    // A request line's own fields repeat its message.
    ignore: 'pid,hostname,http',
    singleLine: true,
    sync: true,
  });
  return pino(options, stream);
}
