// Sign-in sessions for the gateway's own pages: an HTTP-only, SameSite=Lax cookie holding a random
// token whose hash is stored. CSRF tokens are an HMAC of the session (or pre-session) cookie, so
// forms need no server-side state.
import { principalBudgets, type PrincipalBudgets } from '../auth/principal.ts';
import { createHmac } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CookieSerializeOptions } from '@fastify/cookie';
import type { PrismaClient } from '../db/client.ts';
import { constantTimeEqual, hashSecret, newId, randomToken } from '../runtime/secrets.ts';
import type { Clock } from '../runtime/clock.ts';

/**
 * The reply as csrf uses it: ts-rest hands its handlers its own view of fastify's reply type, which
 * fastify 5's FastifyReply does not accept; both have this shape.
 */
export type CookieReply = { setCookie(name: string, value: string, options?: CookieSerializeOptions): unknown };

export const SESSION_COOKIE = 'mg_session';
const PRE_COOKIE = 'mg_pre';

export type SessionUser = {
  id: string;
  email: string | null;
  username: string | null;
  name: string | null;
  avatarUrl: string | null;
  planId: string;
  role: 'user' | 'admin';
  expiresAt: Date;
  /** The user's own spend budgets (set by an operator), for the usage report. */
  budgets?: PrincipalBudgets;
};

export class Sessions {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
    private readonly ttlMs: number,
    private readonly secret: string,
  ) {}

  private cookieOptions(request: FastifyRequest, maxAgeS: number) {
    return { path: '/', httpOnly: true, sameSite: 'lax' as const, secure: request.protocol === 'https', maxAge: maxAgeS };
  }

  async start(request: FastifyRequest, reply: FastifyReply, userId: string): Promise<void> {
    const token = randomToken(43);
    await this.prisma.webSession.create({
      data: { id: newId('ses'), tokenHash: hashSecret(token), userId, csrfHash: '', expiresAt: new Date(this.clock.now() + this.ttlMs) },
    });
    reply.setCookie(SESSION_COOKIE, token, this.cookieOptions(request, Math.floor(this.ttlMs / 1000)));
    // Its forms are done with: from now on only the session's token counts.
    if (request.cookies[PRE_COOKIE]) reply.clearCookie(PRE_COOKIE, { path: '/' });
  }

  async user(request: FastifyRequest): Promise<SessionUser | null> {
    const token = request.cookies[SESSION_COOKIE];
    if (!token) return null;
    const s = await this.prisma.webSession.findUnique({ where: { tokenHash: hashSecret(token) }, include: { user: true } });
    if (!s || s.expiresAt.getTime() <= this.clock.now() || s.user.disabledAt) return null;
    const u = s.user;
    const budgets = principalBudgets(u);
    return { id: u.id, email: u.email, username: u.username, name: u.name, avatarUrl: u.avatarUrl, planId: u.planId, role: u.role === 'admin' ? 'admin' : 'user', expiresAt: s.expiresAt, ...(budgets && { budgets }) };
  }

  async end(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const token = request.cookies[SESSION_COOKIE];
    if (token) await this.prisma.webSession.deleteMany({ where: { tokenHash: hashSecret(token) } });
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
  }

  /** The CSRF token for forms on this page; sets a pre-session cookie for anonymous visitors. */
  csrf(request: FastifyRequest, reply: CookieReply): string {
    let base = request.cookies[SESSION_COOKIE] || request.cookies[PRE_COOKIE];
    if (!base) {
      base = randomToken(32);
      reply.setCookie(PRE_COOKIE, base, this.cookieOptions(request, 3600));
      request.cookies[PRE_COOKIE] = base;
    }
    return createHmac('sha256', this.secret).update(`csrf:${base}`).digest('base64url');
  }

  /** Whether the request carries a session cookie at all (valid or not). */
  has(request: FastifyRequest): boolean {
    return !!request.cookies[SESSION_COOKIE];
  }

  /**
   * Whether `token` is the CSRF token of this request's forms: the session's once a session cookie
   * is present, the pre-session cookie's only before. A pre-session cookie planted beside a session
   * (a sibling subdomain can set one) must not vouch for requests made with that session.
   */
  checkCsrf(request: FastifyRequest, token: unknown): boolean {
    const base = request.cookies[SESSION_COOKIE] || request.cookies[PRE_COOKIE];
    return typeof token === 'string' && !!base && constantTimeEqual(token, createHmac('sha256', this.secret).update(`csrf:${base}`).digest('base64url'));
  }
}
