// Passwords set for a user by someone else than the sign-up form: an operator (CLI, admin API), or
// the user through a single-use reset link (made by an operator, or mailed on request). The rules
// and the argon2id hashing are sign-up's own. A reset link's token is random (256 bits) and only its
// SHA-256 is stored, like every other secret of the gateway; it works once, until it expires, and a
// newer link or a new password voids it. Setting a password ends the user's sessions.
import type { PrismaClient } from '../db/client.ts';
import { hashSecret, newId, randomToken } from '../runtime/secrets.ts';
import { errors } from '../runtime/errors.ts';
import type { Clock } from '../runtime/clock.ts';
import type { ResolvedConfig } from '../config/schema.ts';
import { hashPassword } from './directory.ts';
import { passwordProblem } from './credentials.ts';

/** Where links for people point: the configured public URL, else the address this instance listens on. */
export type LinkBaseDeps = { config: Pick<ResolvedConfig, 'publicUrl'>; listenUrl?: string };

/** Where the reset page lives; the token travels in `token` (redacted in request logs). */
export const RESET_PATH = '/reset-password';
/** A link an operator makes is handed over by a person: a day by default, a week at most. */
export const OPERATOR_LINK_MINUTES = { default: 24 * 60, min: 5, max: 7 * 24 * 60 };

/**
 * The address in links made for people: public_url, else the address this instance listens on.
 * Never a request's Host header, which whoever sends the request chooses.
 */
export function linkBase(services: LinkBaseDeps): string {
  const base = services.config.publicUrl ?? services.listenUrl;
  if (!base) throw new Error('the gateway is not listening yet: no address for links');
  return base;
}

export type ResetOrigin = 'operator' | 'email';
type UserRow = { id: string; email: string | null; disabledAt: Date | null };

/** Why a link does not work, in words for the page (the same whichever reason, past the first). */
export const LINK_NOT_VALID = 'This password-reset link does not work: it expired, was used already, or a newer link or password replaced it.';

/** A 400 weak_password naming the rule, or nothing: the sign-up rules, for the user's email. */
export async function checkPassword(password: string, email: string | null): Promise<void> {
  const problem = await passwordProblem(password, email ?? '');
  if (problem) throw errors.invalid(problem, 'password', 'weak_password');
}

export class Passwords {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
  ) {}

  /**
   * Sets the hash, voids unused reset links and ends every session of the user (whoever held the
   * old password is signed out). Returns how many sessions ended.
   */
  async set(user: UserRow, password: string): Promise<number> {
    await checkPassword(password, user.email);
    return this.store(user, password);
  }

  /** `set` for a password already checked against the rules. */
  private async store(user: UserRow, password: string): Promise<number> {
    const passwordHash = await hashPassword(password);
    const now = new Date(this.clock.now());
    const [, , ended] = await this.prisma.$transaction([
      this.prisma.user.update({ where: { id: user.id }, data: { passwordHash } }),
      this.prisma.passwordReset.updateMany({ where: { userId: user.id, usedAt: null }, data: { usedAt: now } }),
      this.prisma.webSession.deleteMany({ where: { userId: user.id } }),
    ]);
    return ended.count;
  }

  /** A new link for `user` on `baseUrl`; earlier unused links of the user stop working. */
  async createLink(user: UserRow, minutes: number, origin: ResetOrigin, baseUrl: string): Promise<{ url: string; expiresAt: Date }> {
    const token = randomToken(43);
    const now = this.clock.now();
    const expiresAt = new Date(now + minutes * 60_000);
    await this.prisma.$transaction([
      this.prisma.passwordReset.updateMany({ where: { userId: user.id, usedAt: null }, data: { usedAt: new Date(now) } }),
      this.prisma.passwordReset.create({ data: { id: newId('pwr'), tokenHash: hashSecret(token), userId: user.id, origin, expiresAt } }),
    ]);
    return { url: `${baseUrl}${RESET_PATH}?token=${token}`, expiresAt };
  }

  /** The user a link would reset, while it works (looked up by the token's hash). */
  async linkUser(token: unknown): Promise<(UserRow & { resetId: string; hasPassword: boolean }) | null> {
    // A query string may repeat `token` (an array) or omit it: neither is a link.
    if (typeof token !== 'string' || !token || token.length > 200) return null;
    const reset = await this.prisma.passwordReset.findUnique({ where: { tokenHash: hashSecret(token) }, include: { user: true } });
    if (!reset || reset.usedAt || reset.expiresAt.getTime() <= this.clock.now() || reset.user.disabledAt) return null;
    return { id: reset.user.id, email: reset.user.email, disabledAt: reset.user.disabledAt, resetId: reset.id, hasPassword: reset.user.passwordHash !== null };
  }

  /**
   * Uses a link: the password must pass the rules before the link is spent, so a refused password
   * leaves it working. The link is claimed atomically: two submissions cannot both use it.
   */
  async redeem(token: string, password: string): Promise<{ userId: string } | { problem: string; linkSpent: boolean }> {
    const user = await this.linkUser(token);
    if (!user) return { problem: LINK_NOT_VALID, linkSpent: true };
    const weak = await passwordProblem(password, user.email ?? '');
    if (weak) return { problem: weak, linkSpent: false };
    const claimed = await this.prisma.passwordReset.updateMany({ where: { id: user.resetId, usedAt: null }, data: { usedAt: new Date(this.clock.now()) } });
    if (claimed.count !== 1) return { problem: LINK_NOT_VALID, linkSpent: true };
    await this.store(user, password);
    return { userId: user.id };
  }
}
