// Who may create an account (decision 0033). Closed by default: the first account, made at /signup
// while none exists, is the administrator — from this machine freely, from elsewhere with the admin
// token, so a stranger cannot race the operator to it on an exposed port. After it, /signup takes
// anyone with `auth.local.allow_signup: true`, or addresses of `auth.local.signup_email_domains`
// (mailed a link to choose their password: the address is proven, not typed); everyone else is
// invited by an operator (an account, then a set-password link). Sign-in providers create accounts
// under the same rules (`admitExternal`).
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { NAME_MAX_LENGTH, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, normalizeEmail, passwordProblem, validEmail, validName } from '../accounts/credentials.ts';
import type { Admission } from '../accounts/directory.ts';
import type { ExternalProfile } from '../accounts/identity.ts';
import { Passwords, linkBase } from '../accounts/passwords.ts';
import { isLoopbackAddress, loopbackHostHeader } from '../config/loopback.ts';
import type { ResolvedConfig } from '../config/schema.ts';
import type { Services } from '../http/services.ts';
import { html, type Markup } from './html.ts';
import type { PageKit } from './password-reset.ts';

type Form = Record<string, string | undefined>;

/** Headers by which a proxy names the client it relays. */
const FORWARDING = ['x-forwarded-for', 'forwarded', 'x-real-ip'] as const;

/**
 * Whether the request comes from this machine itself: its connection's peer is loopback, no proxy
 * relayed it (a proxy on this machine brings strangers from loopback), and it names the gateway
 * by a loopback host (a page of another site that DNS rebinding points at 127.0.0.1 names its own).
 * Forwarded headers are never believed here, trust_proxy or not: whoever can reach the port could
 * write `X-Forwarded-For: ::1`. Behind any proxy the first account asks for the admin token.
 */
export function fromThisMachine(request: FastifyRequest): boolean {
  if (!isLoopbackAddress(request.socket.remoteAddress)) return false;
  if (FORWARDING.some((h) => request.headers[h] !== undefined)) return false;
  return loopbackHostHeader(request.headers.host);
}

/** The domain of a normalised email. */
const domainOf = (email: string) => email.slice(email.lastIndexOf('@') + 1);

/** Whether `email` may create an account after the first: anyone with allow_signup, else an address of an allowed domain (verified, for a provider's). */
export function mayJoin(config: Pick<ResolvedConfig, 'auth'>, email: string | null, verified: boolean): boolean {
  const local = config.auth.local;
  if (local.allow_signup) return true;
  return Boolean(email && verified && local.signup_email_domains.includes(domainOf(normalizeEmail(email))));
}

/**
 * A sign-in provider's new account: the first account ever only from this machine (the provider's
 * callback cannot carry the admin token: elsewhere, the first account is made at /signup), then
 * sign-up's rules with the provider's verified email.
 */
export function admitExternal(config: Pick<ResolvedConfig, 'auth'>, request: FastifyRequest, profile: ExternalProfile): Admission {
  const local = fromThisMachine(request);
  return (first) => (first ? (local ? 'admin' : null) : mayJoin(config, profile.email, profile.emailVerified) ? 'user' : null);
}

/** What /signup offers this request. */
export type SignupMode =
  | { kind: 'first'; needsToken: boolean }
  | { kind: 'open' }
  | { kind: 'domains'; domains: string[] }
  | { kind: 'closed' };

/** What /signup offers now: decided per request (the first account's path closes once it is made). */
export async function signupMode(services: Pick<Services, 'config' | 'directory'>, request: FastifyRequest, mail: boolean): Promise<SignupMode> {
  const local = services.config.auth.local;
  if (!(await services.directory.hasAccounts())) return { kind: 'first', needsToken: !fromThisMachine(request) };
  if (local.allow_signup) return { kind: 'open' };
  if (local.signup_email_domains.length && mail) return { kind: 'domains', domains: local.signup_email_domains };
  return { kind: 'closed' };
}

/** A list of domains in words: `a.example`, `a.example or b.example`. */
const orList = (items: string[]) => (items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`);

export const WHERE_THE_ADMIN_TOKEN_IS = html`It is in the file <code>admin-token</code> in the gateway's data directory
(<code>DATA_DIR</code>: <code>./data/admin-token</code> with <code>npm start</code>, <code>/data/admin-token</code> in its container, e.g.
<code>docker exec &lt;container&gt; cat /data/admin-token</code>; with PostgreSQL, that of the instance that created it), or it is the
<code>GATEWAY_ADMIN_TOKEN</code> the gateway was started with. The start-up log says which.`;

export async function signupRoutes(app: FastifyInstance, services: Services, kit: PageKit & { nextOf(request: FastifyRequest, next: unknown): string; start(request: FastifyRequest, reply: FastifyReply, userId: string): Promise<void> }) {
  const { config, sessions, directory } = services;
  const local = config.auth.local;
  const passwords = new Passwords(services.db.prisma, services.clock);
  const minutes = local.reset_link_minutes;
  const { mailer } = kit;

  function closedPage(reply: FastifyReply, status = 403) {
    const providers = services.identityProviders.list();
    const byDomain = local.signup_email_domains.length && providers.length;
    return kit.show(
      reply,
      'Sign-up is closed',
      html`<h1>Sign-up is closed</h1>
<p class="error">This gateway does not let visitors create accounts.</p>
<p>Ask its operator to invite you: they create your account and give you a link to choose your password
(<code>model-gateway users create --email &lt;your email&gt;</code>, then <code>model-gateway users reset-link &lt;your email&gt;</code>).</p>
${byDomain ? html`<p>Addresses at ${orList(local.signup_email_domains)} can also sign in with ${orList(providers.map((p) => p.name))} on the sign-in page.</p>` : ''}
<p><a href="/signin">Back to sign-in</a></p>`,
      null,
      status,
    );
  }

  function formPage(request: FastifyRequest, reply: FastifyReply, mode: Exclude<SignupMode, { kind: 'closed' }>, next: string, error?: string, status = error ? 400 : 200, email = '') {
    const csrf = sessions.csrf(request, reply);
    const hidden = html`<input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="next" value="${next}">`;
    const nameAndEmail = html`<label for="name">Name</label><input id="name" name="name" autocomplete="name">
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${email}">`;
    if (mode.kind === 'domains') {
      return kit.show(
        reply,
        'Create an account',
        html`<h1>Create an account</h1>
${error ? html`<p class="error">${error}</p>` : ''}
<p>Addresses at ${orList(mode.domains)} can create an account here: a link to choose your password is mailed to the address you enter.</p>
<form method="post" action="/signup">${hidden}
${nameAndEmail}
<button type="submit" id="signup">Send the link</button></form>
<p>Another address? Ask the gateway's operator to invite you. <a href="/signin">Back to sign-in</a></p>`,
        null,
        status,
      );
    }
    const first = mode.kind === 'first';
    return kit.show(
      reply,
      first ? 'Create the administrator account' : 'Create an account',
      html`<h1>${first ? 'Create the administrator account' : 'Create an account'}</h1>
${error ? html`<p class="error">${error}</p>` : ''}
${first ? html`<p class="notice">This gateway has no account yet. The account you create now is its <strong>administrator</strong>: it sees every user, key and request, and can change them. Later accounts are invited by an administrator${local.allow_signup ? ', or sign up here' : ''}.</p>` : ''}
<form method="post" action="/signup">${hidden}
${nameAndEmail}
<label for="password">Password (at least ${PASSWORD_MIN_LENGTH} characters, not a common one)</label><input id="password" name="password" type="password" autocomplete="new-password" minlength="${PASSWORD_MIN_LENGTH}" maxlength="${PASSWORD_MAX_LENGTH}" required>
${first && mode.needsToken
  ? html`<label for="admin_token">Admin token</label><input id="admin_token" name="admin_token" type="password" autocomplete="off" required>
<p id="admin-token-help">You are not on the gateway's own machine, so this form asks for the gateway's admin token, which only its operator can read. ${WHERE_THE_ADMIN_TOKEN_IS}</p>`
  : ''}
<button type="submit" id="signup">Create account</button></form>`,
      null,
      status,
    );
  }

  /** Mails `email` a link to choose a password: a new account's (made now), or an existing one's reset. Runs after the answer is sent. */
  async function mailLink(email: string, name: string | null, log: FastifyBaseLogger): Promise<void> {
    if (!mailer) return;
    const user = await directory.withoutPassword(email, name, (first) => (first ? null : mayJoin(config, email, true) ? 'user' : null));
    if (!user?.email || user.disabledAt) return;
    const link = await passwords.createLink(user, minutes, 'email', linkBase(services));
    const base = new URL(link.url).origin;
    const fresh = user.passwordHash === null;
    await mailer.send({
      to: user.email,
      subject: fresh ? 'Finish creating your Model Gateway account' : 'Your Model Gateway account',
      text: fresh
        ? `Someone, hopefully you, asked to create a Model Gateway account for ${user.email} at ${base}.\n\n` +
          `Open this link within ${minutes} minutes to choose your password. It works once:\n\n${link.url}\n\n` +
          'If you did not ask, ignore this mail: without a password nobody can use the account.\n'
        : `Someone, hopefully you, asked to create a Model Gateway account for ${user.email} at ${base}, but it already has one.\n\n` +
          `To choose a new password, open this link within ${minutes} minutes. It works once:\n\n${link.url}\n\n` +
          'If you did not ask, ignore this mail: your password stays as it is.\n',
    });
    log.info({ audit: { actor: 'self', action: fresh ? 'user.signup_mail' : 'user.reset_mail', target: user.id } }, fresh ? 'sign-up link mailed' : 'password-reset link mailed (sign-up of an existing account)');
  }

  app.get('/signup', async (request, reply) => {
    if (!local.enabled) return kit.redirect(reply, '/signin');
    const mode = await signupMode(services, request, mailer !== null);
    if (mode.kind === 'closed') return closedPage(reply);
    return formPage(request, reply, mode, kit.nextOf(request, (request.query as Form).next));
  });

  app.post('/signup', async (request, reply) => {
    if (!kit.csrfOk(request, reply)) return;
    if (!local.enabled) return kit.redirect(reply, '/signin');
    const mode = await signupMode(services, request, mailer !== null);
    if (mode.kind === 'closed') return closedPage(reply);
    const f = request.body as Form;
    const next = kit.nextOf(request, f.next);
    const crowded = await kit.throttle.signUp(request.ip);
    if (crowded) return formPage(request, reply, mode, next, kit.tooMany(reply, 'Too many sign-ups from your address.', crowded), 429);
    const email = normalizeEmail(f.email ?? '');
    const name = f.name?.trim() || null;
    if (!validEmail(email)) return formPage(request, reply, mode, next, 'Enter a valid email address.');
    if (name !== null && !validName(name)) return formPage(request, reply, mode, next, `Enter a name of at most ${NAME_MAX_LENGTH} characters, without control characters.`, 400, email);

    if (mode.kind === 'domains') {
      if (!mayJoin(config, email, true)) {
        return formPage(request, reply, mode, next, `Only addresses at ${orList(mode.domains)} can create an account here. For another one, ask the gateway's operator to invite you.`, 403, email);
      }
      // Counted like a password-reset mail (per email and per address): this mails a link too.
      const refused = await kit.throttle.reset(email, request.ip);
      if (refused) return formPage(request, reply, mode, next, kit.tooMany(reply, 'Too many links asked for.', refused), 429, email);
      const log = request.log;
      setImmediate(() => void mailLink(email, name, log).catch((err: Error) => log.warn({ err: err.message }, 'sign-up mail not sent')));
      return kit.show(
        reply,
        'Check your mail',
        html`<h1>Check your mail</h1>
<p class="notice">A link to choose your password is on its way to ${email}. It works once, for ${minutes} minutes.</p>
<p>Nothing after a few minutes? Look in the spam folder, or ask the gateway's operator to invite you.</p>
<p><a href="/signin">Back to sign-in</a></p>`,
      );
    }

    const password = f.password ?? '';
    const weak = await passwordProblem(password, email);
    if (weak) return formPage(request, reply, mode, next, weak, 400, email);
    const trusted = mode.kind === 'first' && (!mode.needsToken || services.adminTokens.accepts(f.admin_token ?? ''));
    if (mode.kind === 'first' && !trusted) {
      request.log.warn({ ip: request.ip }, 'first-account sign-up refused: no valid admin token');
      return formPage(request, reply, mode, next, f.admin_token ? 'That is not this gateway’s admin token.' : 'Enter the gateway’s admin token: the first account is its administrator.', 401, email);
    }
    // The first account (trusted: this machine, or the admin token) is the administrator; a later
    // one (another sign-up may have made the first meanwhile) follows allow_signup.
    const admit: Admission = (first) => (first ? (trusted ? 'admin' : null) : local.allow_signup ? 'user' : null);
    // An existing email is not revealed: with its password this signs the owner in, with another
    // it fails exactly as sign-in does (and counts as a failed sign-in).
    const signedUp = await kit.throttle.guard(email, request.ip, async () => {
      const made = await directory.signUp(email, password, name, admit);
      if ('refused' in made) return 'refused' as const;
      if ('user' in made) return made.user;
      return directory.signIn(email, password);
    });
    if ('retryAt' in signedUp) return formPage(request, reply, mode, next, kit.tooMany(reply, 'Too many sign-in attempts.', signedUp), 429, email);
    if (signedUp.result === 'refused') return closedPage(reply);
    if (!signedUp.result) return formPage(request, reply, mode, next, 'Wrong email or password.', 401, email);
    const user = signedUp.result;
    if ('role' in user && user.role === 'admin') {
      request.log.info({ audit: { actor: user.id, action: 'user.first_admin', target: user.id } }, 'first account created: the administrator');
    }
    await kit.start(request, reply, user.id);
    return kit.redirect(reply, next);
  });
}
