// The password-reset pages: /forgot-password mails a single-use link when the gateway has an SMTP
// server (and never says whether the email has an account), /reset-password?token=… lets the link's
// holder choose a password. Links are made by accounts/passwords.ts, also for operators (CLI).
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LINK_NOT_VALID, Passwords, RESET_PATH, linkBase } from '../accounts/passwords.ts';
import type { Mailer } from '../accounts/mailer.ts';
import type { Services } from '../http/services.ts';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, normalizeEmail, validEmail } from '../accounts/credentials.ts';
import { html, type Markup } from './html.ts';
import type { Refused, SignInThrottle } from './throttle.ts';

type Form = Record<string, string | undefined>;

/** What the sign-in pages share with these. */
export type PageKit = {
  show(reply: FastifyReply, title: string, body: Markup, user?: null, status?: number): FastifyReply;
  redirect(reply: FastifyReply, to: string): FastifyReply;
  csrfOk(request: FastifyRequest, reply: FastifyReply): boolean;
  tooMany(reply: FastifyReply, what: string, refused: Refused): string;
  throttle: SignInThrottle;
  /** The operator's SMTP server (config `smtp`), or null: then nothing is mailed. */
  mailer: Mailer | null;
};

export const FORGOT_PATH = '/forgot-password';

const askOperator = html`<p>This gateway does not send mail. Ask its operator for a reset link: they make one with
<code>model-gateway users reset-link &lt;your email&gt;</code>.</p>`;

export async function passwordResetRoutes(app: FastifyInstance, services: Services, kit: PageKit) {
  const { config, sessions } = services;
  const passwords = new Passwords(services.db.prisma, services.clock);
  const { mailer } = kit;
  const minutes = config.auth.local.reset_link_minutes;

  /**
   * Makes and mails a link when the email belongs to an enabled user; nothing otherwise. Runs after
   * the answer is sent, so its time says nothing about the account either.
   */
  async function mailLink(email: string, log: FastifyBaseLogger): Promise<void> {
    const user = await services.db.prisma.user.findUnique({ where: { email } });
    if (!user?.email || user.disabledAt || !mailer) return;
    const link = await passwords.createLink(user, minutes, 'email', linkBase(services));
    const base = new URL(link.url).origin;
    await mailer.send({
      to: user.email,
      subject: 'Reset your Model Gateway password',
      text:
        `Someone, hopefully you, asked to reset the password of the Model Gateway account ${user.email} at ${base}.\n\n` +
        `Open this link within ${minutes} minutes to choose a new password. It works once:\n\n${link.url}\n\n` +
        'If you did not ask, ignore this mail: your password stays as it is.\n',
    });
    log.info({ audit: { actor: 'self', action: 'user.reset_mail', target: user.id } }, 'password-reset link mailed');
  }

  function forgotPage(request: FastifyRequest, reply: FastifyReply, error?: string, status = error ? 400 : 200) {
    if (!mailer) return kit.show(reply, 'Reset your password', html`<h1>Reset your password</h1>${askOperator}<p><a href="/signin">Back to sign-in</a></p>`);
    const csrf = sessions.csrf(request, reply);
    return kit.show(
      reply,
      'Reset your password',
      html`<h1>Reset your password</h1>
${error ? html`<p class="error">${error}</p>` : ''}
<p>Enter the email of your account: a link to choose a new password is mailed to it.</p>
<form method="post" action="${FORGOT_PATH}"><input type="hidden" name="csrf" value="${csrf}">
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required maxlength="254" autofocus>
<button type="submit" id="send-link">Send the link</button></form>
<p><a href="/signin">Back to sign-in</a></p>`,
      null,
      status,
    );
  }

  app.get(FORGOT_PATH, async (request, reply) => (config.auth.local.enabled ? forgotPage(request, reply) : kit.redirect(reply, '/signin')));
  app.post(FORGOT_PATH, async (request, reply) => {
    if (!kit.csrfOk(request, reply)) return;
    if (!config.auth.local.enabled) return kit.redirect(reply, '/signin');
    if (!mailer) return forgotPage(request, reply);
    const email = normalizeEmail((request.body as Form).email ?? '');
    if (!validEmail(email)) return forgotPage(request, reply, 'Enter a valid email address.');
    // Counted per email whether or not it has an account: a refusal tells nothing either.
    const refused = await kit.throttle.reset(email, request.ip);
    if (refused) return forgotPage(request, reply, kit.tooMany(reply, 'Too many reset links asked for.', refused), 429);
    const log = request.log;
    setImmediate(() => void mailLink(email, log).catch((err: Error) => log.warn({ err: err.message }, 'password-reset mail not sent')));
    return kit.show(
      reply,
      'Check your mail',
      html`<h1>Check your mail</h1>
<p class="notice">If an account uses ${email}, a link to choose a new password is on its way to it. The link works once, for ${minutes} minutes.</p>
<p>Nothing after a few minutes? Look in the spam folder, or ask the gateway's operator for a link.</p>
<p><a href="/signin">Back to sign-in</a></p>`,
    );
  });

  function linkNotValid(reply: FastifyReply) {
    return kit.show(
      reply,
      'Link not valid',
      html`<h1>Choose a new password</h1><p class="error">${LINK_NOT_VALID}</p>
${mailer ? html`<p><a href="${FORGOT_PATH}">Ask for a new link</a>.</p>` : askOperator}`,
      null,
      400,
    );
  }

  /** The page of a link; `fresh`: the account has no password yet (an invitation, or a sign-up by email domain). */
  function resetPage(request: FastifyRequest, reply: FastifyReply, token: string, email: string | null, fresh: boolean, error?: string) {
    const csrf = sessions.csrf(request, reply);
    const title = fresh ? 'Choose your password' : 'Choose a new password';
    return kit.show(
      reply,
      title,
      html`<h1>${title}</h1>
${error ? html`<p class="error">${error}</p>` : ''}
${fresh ? html`<p class="notice">Welcome: this account is new. Choose its password to sign in.</p>` : ''}
<form method="post" action="${RESET_PATH}"><input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="token" value="${token}">
${email ? html`<label for="email">Account</label><input id="email" name="email" type="email" autocomplete="username" value="${email}" readonly>` : ''}
<label for="password">${fresh ? 'Password' : 'New password'} (at least ${PASSWORD_MIN_LENGTH} characters, not a common one)</label><input id="password" name="password" type="password" autocomplete="new-password" minlength="${PASSWORD_MIN_LENGTH}" maxlength="${PASSWORD_MAX_LENGTH}" required autofocus>
<label for="confirm">The same again</label><input id="confirm" name="confirm" type="password" autocomplete="new-password" maxlength="${PASSWORD_MAX_LENGTH}" required>
<button type="submit" id="set-password">Set the password</button></form>
${fresh ? '' : html`<p>Setting it signs you out everywhere else.</p>`}`,
      null,
      error ? 400 : 200,
    );
  }

  app.get(RESET_PATH, async (request, reply) => {
    if (!config.auth.local.enabled) return kit.redirect(reply, '/signin');
    const token = (request.query as Form).token ?? '';
    const user = await passwords.linkUser(token);
    return user ? resetPage(request, reply, token, user.email, !user.hasPassword) : linkNotValid(reply);
  });
  app.post(RESET_PATH, async (request, reply) => {
    if (!kit.csrfOk(request, reply)) return;
    if (!config.auth.local.enabled) return kit.redirect(reply, '/signin');
    const f = request.body as Form;
    const token = f.token ?? '';
    const user = await passwords.linkUser(token);
    if (!user) return linkNotValid(reply);
    if ((f.password ?? '') !== (f.confirm ?? '')) return resetPage(request, reply, token, user.email, !user.hasPassword, 'The two passwords differ: type the same one twice.');
    const done = await passwords.redeem(token, f.password ?? '');
    if ('problem' in done) return done.linkSpent ? linkNotValid(reply) : resetPage(request, reply, token, user.email, !user.hasPassword, done.problem);
    request.log.info({ audit: { actor: done.userId, action: 'user.reset_password', target: done.userId } }, 'password reset with a link');
    // Every other session ended with the change; this browser is signed in with the new password.
    await sessions.start(request, reply, done.userId);
    return kit.redirect(reply, '/dashboard');
  });
}
