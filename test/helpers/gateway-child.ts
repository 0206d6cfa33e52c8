// A gateway in its own process, for tests that must see whether the process survives what they
// send. Creates `GATEWAY_TEST_KEYS` keys (default 2) and prints `{"url":…,"keys":[…]}` once
// listening; SIGTERM closes it.
import pino from 'pino';
import { startGateway } from '../../server/main.ts';

const gw = await startGateway(process.env, pino({ level: process.env.GATEWAY_TEST_LOG ?? 'silent' }, pino.destination(2)));
const keys: string[] = [];
for (let i = 0; i < Number(process.env.GATEWAY_TEST_KEYS ?? 2); i++) {
  const user = await gw.services.accounts.createUser({ email: `child${i}@example.com` });
  keys.push((await gw.services.accounts.createKey({ user: user.id })).key);
}
process.stdout.write(JSON.stringify({ url: gw.url, keys }) + '\n');
process.on('SIGTERM', () => void gw.close().then(() => process.exit(0)));
