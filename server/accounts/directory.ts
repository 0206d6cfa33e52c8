// Users who sign in to the gateway's pages: local email + password accounts (argon2id) and
// accounts from external identity providers. Who may create an account is the caller's to say
// (an `Admission`); the first account ever made is the administrator (decision 0033).
import { randomBytes } from 'node:crypto';
import type { PrismaClient } from '../db/client.ts';
import { newId } from '../runtime/secrets.ts';
import { normalizeEmail } from './credentials.ts';
import type { ExternalProfile } from './identity.ts';

// Loaded at the first sign-up or sign-in: argon2id's 19 MiB of WebAssembly memory, once used, stays
// with the process, and a gateway that serves only the API never needs it.
let argon2: Promise<typeof import('hash-wasm')> | null = null;
const hashWasm = () => (argon2 ??= import('hash-wasm'));

/** argon2id in the PHC string format (salt and parameters included). */
export const hashPassword = async (password: string) =>
  (await hashWasm()).argon2id({ password, salt: randomBytes(16), parallelism: 1, iterations: 3, memorySize: 19_456, hashLength: 32, outputType: 'encoded' });

// Verifying against this when the email is unknown keeps the timing of both failures alike (made
// at the first sign-in, before that sign-in's own verification).
let dummy: Promise<string> | null = null;
const dummyHash = () => (dummy ??= hashPassword(randomBytes(16).toString('hex')));

/** The role of a new account; null: it may not be created. */
export type Role = 'user' | 'admin';
/**
 * Decides, as a new account is about to be created, whether it may be and with which role: `first`
 * says no account exists yet (decided inside the creating transaction, so two first sign-ups at once
 * cannot both be it). The rules are the web layer's (server/web/signup.ts, decision 0033).
 */
export type Admission = (first: boolean) => Role | null;

/** What creating an account came to: the user, the email already taken, or refused by the admission. */
export type Created = { user: { id: string; role: Role } } | { taken: true } | { refused: true; first: boolean };

type NewAccount = { email: string | null; name: string | null; username?: string | null; avatarUrl?: string | null; passwordHash?: string | null };

export class AccountDirectory {
  /** Once an account exists there always is one (accounts are disabled, never deleted): remembered. */
  private someone = false;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly defaultPlan: string,
  ) {}

  /** Whether any account exists (the first one is made by the first-account path of /signup). */
  async hasAccounts(): Promise<boolean> {
    if (this.someone) return true;
    this.someone = (await this.prisma.user.findFirst({ select: { id: true } })) !== null;
    return this.someone;
  }

  /**
   * Creates an account if `admit` lets it, with the role it gives. The users table is locked for the
   * moment of the check and the insert, so "no account yet" holds until this one is made: of two
   * first sign-ups at once, on one instance or several, one is the administrator and the other is
   * judged as a later sign-up.
   */
  private async create(data: NewAccount, admit: Admission): Promise<Created> {
    try {
      return await this.prisma.$transaction(async (tx) => {
        await tx.$executeRaw`LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE`;
        if (data.email && (await tx.user.findUnique({ where: { email: data.email }, select: { id: true } }))) return { taken: true } as const;
        const first = (await tx.user.findFirst({ select: { id: true } })) === null;
        const role = admit(first);
        if (!role) return { refused: true, first } as const;
        const user = await tx.user.create({
          data: { id: newId('usr'), email: data.email, name: data.name, username: data.username ?? data.name, avatarUrl: data.avatarUrl ?? null, planId: this.defaultPlan, passwordHash: data.passwordHash ?? null, role },
        });
        this.someone = true;
        return { user: { id: user.id, role } };
      });
    } catch (err) {
      // Taken by a concurrent sign-up.
      if ((err as { code?: string }).code === 'P2002') return { taken: true };
      throw err;
    }
  }

  /** A new account for a normalised email and an accepted password, if `admit` lets it. */
  async signUp(email: string, password: string, name: string | null, admit: Admission): Promise<Created> {
    if (await this.prisma.user.findUnique({ where: { email }, select: { id: true } })) return { taken: true };
    return this.create({ email, name, passwordHash: await hashPassword(password) }, admit);
  }

  /**
   * An account without a password for a normalised email (an address of an allowed domain, which
   * then receives a link to choose one), if `admit` lets it; the existing account when the email has one.
   */
  async withoutPassword(email: string, name: string | null, admit: Admission): Promise<{ id: string; email: string | null; disabledAt: Date | null; passwordHash: string | null } | null> {
    const existing = () => this.prisma.user.findUnique({ where: { email } });
    const found = await existing();
    if (found) return found;
    const made = await this.create({ email, name }, admit);
    if ('refused' in made) return null;
    return existing();
  }

  async signIn(email: string, password: string): Promise<{ id: string } | null> {
    const fallback = await dummyHash();
    const user = await this.prisma.user.findUnique({ where: { email: normalizeEmail(email) } });
    const ok = await (await hashWasm()).argon2Verify({ password, hash: user?.passwordHash ?? fallback });
    return user && user.passwordHash && ok && !user.disabledAt ? user : null;
  }

  /**
   * The user behind an external identity; links to an existing account only by a verified email (an
   * operator invites someone who signs in with a provider by creating an account with their email).
   * A new account is made only if `admit` lets it: sign-up's rules hold for providers too.
   */
  async external(provider: string, p: ExternalProfile, admit: Admission): Promise<{ id: string } | { refused: true; first: boolean }> {
    const identity = await this.prisma.identity.findUnique({ where: { provider_subject: { provider, subject: p.subject } }, include: { user: true } });
    if (identity) {
      await this.prisma.user.update({ where: { id: identity.userId }, data: { username: p.username ?? identity.user.username, avatarUrl: p.avatarUrl ?? identity.user.avatarUrl } });
      return identity.user;
    }
    const email = p.email?.toLowerCase() ?? null;
    let user: { id: string } | null = email && p.emailVerified ? await this.prisma.user.findUnique({ where: { email } }) : null;
    if (!user) {
      // An email another account has (not verified here, so not linked) is left off the new account.
      const made = await this.create({ email, name: p.name, username: p.username ?? p.name, avatarUrl: p.avatarUrl }, admit);
      if ('refused' in made) return made;
      user = 'taken' in made ? await this.create({ email: null, name: p.name, username: p.username ?? p.name, avatarUrl: p.avatarUrl }, admit).then((m) => ('user' in m ? m.user : null)) : made.user;
      if (!user) return { refused: true, first: false };
    }
    await this.prisma.identity.create({ data: { id: newId('idn'), userId: user.id, provider, subject: p.subject, email } });
    return user;
  }
}
