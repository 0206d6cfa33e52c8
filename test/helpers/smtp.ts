// A mail server for tests (smtp-server): it wants a password and keeps what it receives.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export type Mail = { to: string[]; from: string; subject: string; text: string };

/** A mail server that wants a password, and keeps what it receives. */
export async function fakeSmtp(password: string) {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.username === 'mailer' && auth.password === password) cb(null, { user: 'mailer' });
      else cb(new Error('Invalid username or password'));
    },
    onData(stream, session, cb) {
      let raw = '';
      stream.on('data', (d: Buffer) => (raw += d.toString('utf8')));
      stream.on('end', () => {
        const [head, ...body] = raw.split('\r\n\r\n');
        // Quoted-printable: soft line breaks and =XX escapes.
        const text = body.join('\r\n\r\n').replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
        mails.push({
          to: session.envelope.rcptTo.map((r) => r.address),
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          subject: /^Subject: (.*)$/m.exec(head!)?.[1] ?? '',
          text,
        });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { mails, port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

