// Mail the gateway sends: password-reset links, through the operator's SMTP server (config `smtp`).
import type { SmtpConfig } from '../config/schema.ts';

export type Mail = { to: string; subject: string; text: string };
export type Mailer = { send(mail: Mail): Promise<void>; close(): void };

/** One SMTP transport, opened at the first mail (most gateways never send one). */
export function smtpMailer(cfg: SmtpConfig): Mailer {
  type Transport = { sendMail(m: Mail & { from: string }): Promise<unknown>; close(): void };
  let transport: Promise<Transport> | null = null;
  const open = () =>
    (transport ??= import('nodemailer').then(
      ({ default: nodemailer }) =>
        nodemailer.createTransport({
          host: cfg.host,
          port: cfg.port,
          secure: cfg.secure,
          auth: cfg.user ? { user: cfg.user, pass: cfg.password ?? '' } : undefined,
          // A mail server that does not answer must not hold a request's work for minutes.
          connectionTimeout: 10_000,
          greetingTimeout: 10_000,
          socketTimeout: 30_000,
        }) as Transport,
    ));
  return {
    async send(mail) {
      await (await open()).sendMail({ ...mail, from: cfg.from });
    },
    close() {
      // A transport that never opened (nodemailer failed to load or to start) has nothing to close.
      transport?.then((t) => t.close()).catch(() => {});
    },
  };
}
