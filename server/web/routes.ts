// The gateway's own pages: sign-in (local accounts and external identity providers), the consent
// decision, and the dashboard's paths (the dashboard itself is a client of the API: dashboard.ts).
// Forms carry CSRF tokens; pages send frame-busting headers.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkAuthorizeRequest, redirectWith, type AuthorizeParams } from '../oauth/authorize.ts';
import { errorPage, issuerOf } from '../http/oauth-endpoints.ts';
import type { Services } from '../http/services.ts';
import { html, page, pageHeaders, type Markup } from './html.ts';
import { smtpMailer } from '../accounts/mailer.ts';
import type { SessionUser } from './sessions.ts';
import { SignInThrottle, type Refused } from './throttle.ts';
import { dashboardRoutes } from './dashboard.ts';
import { FORGOT_PATH, passwordResetRoutes } from './password-reset.ts';
import { admitExternal, signupMode, signupRoutes } from './signup.ts';

type Form = Record<string, string | undefined>;
const IDP_COOKIE = 'mg_idp';

// Failed sign-ins say the same whether or not the account exists.
const WRONG_CREDENTIALS = 'Wrong email or password.';

const HOME = '/dashboard';

/**
 * `next` when it is a path on this origin, else the dashboard. Control characters and backslashes are
 * refused outright: browsers drop or reinterpret them (`/\t/host` becomes `//host`).
 */
function safeNext(next: unknown, origin: string): string {
  if (typeof next !== 'string' || !next.startsWith('/') || /[\u0000-\u001f\u007f\\]/.test(next)) return HOME;
  const url = new URL(next, origin);
  return url.origin === origin ? url.pathname + url.search + url.hash : HOME;
}

export async function webRoutes(app: FastifyInstance, services: Services) {
  const { sessions, directory, identityProviders, oauth, config } = services;
  const show = (reply: FastifyReply, title: string, body: Markup, user?: SessionUser | null, status = 200) =>
    reply.status(status).headers(pageHeaders).send(page(title, body, user));
  const redirect = (reply: FastifyReply, to: string) => reply.status(303).header('location', to).header('cache-control', 'no-store').send();
  const csrfOk = (request: FastifyRequest, reply: FastifyReply) => {
    if (sessions.checkCsrf(request, (request.body as Form | undefined)?.csrf)) return true;
    show(reply, 'Expired form', html`<h1>This form expired</h1><p class="error">Go back, reload the page and try again.</p>`, null, 403);
    return false;
  };

  app.get('/', async (request, reply) => redirect(reply, (await sessions.user(request)) ? HOME : '/signin'));

  const throttle = new SignInThrottle(services.counters, () => services.clock.now(), config.auth.local.throttle);
  const nextOf = (request: FastifyRequest, next: unknown) => safeNext(next, new URL(issuerOf(services, request)).origin);
  /** The wait, in the Retry-After header and in words for the page. */
  const tooMany = (reply: FastifyReply, what: string, { retryAt }: Refused) => {
    const seconds = Math.max(1, Math.ceil((retryAt - services.clock.now()) / 1000));
    const minutes = Math.ceil(seconds / 60);
    reply.header('retry-after', String(seconds));
    return `${what} Try again in ${minutes} minute${minutes === 1 ? '' : 's'} (after ${new Date(retryAt).toISOString().slice(11, 16)} UTC).`;
  };
  const tooManySignIns = (reply: FastifyReply, refused: Refused) => tooMany(reply, 'Too many sign-in attempts.', refused);

  const mailer = config.smtp ? smtpMailer(config.smtp) : null;
  app.addHook('onClose', async () => mailer?.close());

  async function signinPage(request: FastifyRequest, reply: FastifyReply, next: string, error?: string, status = error ? 401 : 200, email = '') {
    const csrf = sessions.csrf(request, reply);
    const local = config.auth.local;
    const signup = local.enabled ? (await signupMode(services, request, mailer !== null)).kind : 'closed';
    const create = `/signup?next=${encodeURIComponent(next)}`;
    const body = html`<h1>Sign in</h1>
${error ? html`<p class="error">${error}</p>` : ''}
${signup === 'first' ? html`<p class="notice">This gateway has no account yet. <a href="${create}">Create the first one</a>: it becomes the administrator.</p>` : ''}
${identityProviders.list().map((p) => html`<p><a class="button" href="/signin/${p.id}?next=${encodeURIComponent(next)}">Continue with ${p.name}</a></p>`)}
${local.enabled
  ? html`<form method="post" action="/signin">
<input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="next" value="${next}">
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required value="${email}" ${email ? '' : html`autofocus`}>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required ${email ? html`autofocus` : ''}>
<button type="submit" id="signin">Sign in</button>
</form><p><a href="${FORGOT_PATH}">Forgot your password?</a></p>${signup === 'open' || signup === 'domains' ? html`<p>No account? <a href="${create}">Create one</a>.</p>` : ''}`
  : ''}`;
    return show(reply, 'Sign in', body, null, status);
  }

  app.get('/signin', async (request, reply) => signinPage(request, reply, nextOf(request, (request.query as Form).next)));
  app.post('/signin', async (request, reply) => {
    if (!csrfOk(request, reply)) return;
    const f = request.body as Form;
    const next = nextOf(request, f.next);
    if (!config.auth.local.enabled) return signinPage(request, reply, next, 'Password sign-in is disabled.');
    const email = f.email ?? '';
    const signedIn = await throttle.guard(email, request.ip, () => directory.signIn(email, f.password ?? ''));
    if ('retryAt' in signedIn) return signinPage(request, reply, next, tooManySignIns(reply, signedIn), 429, email);
    if (!signedIn.result) return signinPage(request, reply, next, WRONG_CREDENTIALS, 401, email);
    await sessions.start(request, reply, signedIn.result.id);
    return redirect(reply, next);
  });

  const kit = { show, redirect, csrfOk, tooMany, throttle, mailer };
  await passwordResetRoutes(app, services, kit);
  await signupRoutes(app, services, { ...kit, nextOf, start: (request, reply, userId) => sessions.start(request, reply, userId) });

  app.post('/signout', async (request, reply) => {
    if (!csrfOk(request, reply)) return;
    await sessions.end(request, reply);
    return redirect(reply, '/signin');
  });

  // ---- external identity providers ----------------------------------------------------------
  app.get('/signin/:provider', async (request, reply) => {
    const { provider } = request.params as { provider: string };
    if (!identityProviders.list().some((p) => p.id === provider)) return show(reply, 'Sign in', html`<p class="error">Unknown sign-in provider.</p>`, null, 404);
    const next = nextOf(request, (request.query as Form).next);
    const callback = `${issuerOf(services, request)}/signin/${provider}/callback`;
    let start;
    try {
      start = await identityProviders.start(provider, callback);
    } catch (err) {
      request.log.error({ err }, 'identity provider unavailable');
      return show(reply, 'Sign in', html`<p class="error">The sign-in provider cannot be reached right now.</p>`, null, 502);
    }
    reply.setCookie(IDP_COOKIE, JSON.stringify({ provider, state: start.state, verifier: start.verifier, nonce: start.nonce, next }), {
      path: '/signin', httpOnly: true, sameSite: 'lax', secure: request.protocol === 'https', signed: true, maxAge: 600,
    });
    return reply.status(302).header('location', start.url).send();
  });

  app.get('/signin/:provider/callback', async (request, reply) => {
    const { provider } = request.params as { provider: string };
    const raw = request.cookies[IDP_COOKIE];
    const unsigned = raw ? request.unsignCookie(raw) : null;
    const saved = unsigned?.valid && unsigned.value ? (JSON.parse(unsigned.value) as { provider: string; state: string; verifier: string; nonce: string; next: string }) : null;
    reply.clearCookie(IDP_COOKIE, { path: '/signin' });
    if (!saved || saved.provider !== provider) return signinPage(request, reply, HOME, 'The sign-in took too long or was started elsewhere; try again.');
    try {
      const profile = await identityProviders.finish(provider, new URL(request.url, issuerOf(services, request)), saved);
      const user = await directory.external(provider, profile, admitExternal(config, request, profile));
      if ('refused' in user) {
        const name = identityProviders.list().find((p) => p.id === provider)?.name ?? provider;
        request.log.info({ provider, first: user.first }, 'external sign-in refused: no account, and sign-up is closed to it');
        return show(
          reply,
          'No account',
          user.first
            ? html`<h1>No account yet</h1><p class="error">This gateway has no account yet, and its first account (the administrator) cannot be made by signing in with ${name} from another machine.</p>
<p>Its operator creates it at <a href="/signup">/signup</a> (with the gateway's admin token), or with <code>model-gateway users create</code> and <code>users set-role … admin</code>.</p>`
            : html`<h1>No account</h1><p class="error">No account of this gateway belongs to this ${name} identity${profile.email ? html` (${profile.email})` : ''}, and sign-up is closed to it.</p>
<p>Ask the gateway's operator to invite you: once they create an account with your email address, sign in with ${name} again${profile.email && !profile.emailVerified ? ` (${name} must say the address is verified)` : ''}.</p>`,
          null,
          403,
        );
      }
      await sessions.start(request, reply, user.id);
      return redirect(reply, saved.next);
    } catch (err) {
      request.log.warn({ err }, 'external sign-in failed');
      return signinPage(request, reply, saved.next, 'Sign-in with the provider failed; try again.');
    }
  });

  // ---- OAuth consent decision -------------------------------------------------------------------
  app.post('/oauth/consent', async (request, reply) => {
    if (!csrfOk(request, reply)) return;
    const user = await sessions.user(request);
    if (!user) return redirect(reply, '/signin');
    const f = request.body as Form & AuthorizeParams;
    const issuer = issuerOf(services, request);
    const check = await checkAuthorizeRequest(oauth, f, issuer);
    if (check.kind === 'page') return reply.status(400).headers(pageHeaders).send(errorPage(check.title, check.message));
    if (check.kind === 'redirect') return redirect(reply, check.location);
    const { app: client, params, scopes } = check;
    if (f.decision !== 'approve') return redirect(reply, redirectWith(params.redirect_uri, { error: 'access_denied', error_description: 'The user denied access.', state: params.state, iss: issuer }));
    const code = await oauth.issueCode({ appId: client.id, userId: user.id, redirectUri: params.redirect_uri, scopes, codeChallenge: params.code_challenge, codeChallengeMethod: params.code_challenge_method });
    return redirect(reply, redirectWith(params.redirect_uri, { code, state: params.state, iss: issuer }));
  });

  // ---- the dashboard (a client of the API, built from web/) ------------------------------------
  await dashboardRoutes(app, services, async (request, reply) => {
    const user = await sessions.user(request);
    if (!user) redirect(reply, `/signin?next=${encodeURIComponent(request.url)}`);
    return user;
  }, pageHeaders);
}
