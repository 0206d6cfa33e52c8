// Users who sign in to the gateway's pages: local email + password accounts (argon2id) and
// accounts from external identity providers. The first sign-in creates the user.
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

export class AccountDirectory {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly defaultPlan: string,
  ) {}

  /** A new account for a normalised email and an accepted password; null when the email is taken. */
  async signUp(email: string, password: string, name: string | null): Promise<{ id: string } | null> {
    if (await this.prisma.user.findUnique({ where: { email } })) return null;
    try {
      return await this.prisma.user.create({
        data: { id: newId('usr'), email, name, username: name, planId: this.defaultPlan, passwordHash: await hashPassword(password) },
      });
    } catch (err) {
      // Taken by a concurrent sign-up.
      if ((err as { code?: string }).code === 'P2002') return null;
      throw err;
    }
  }

  async signIn(email: string, password: string): Promise<{ id: string } | null> {
    const fallback = await dummyHash();
    const user = await this.prisma.user.findUnique({ where: { email: normalizeEmail(email) } });
    const ok = await (await hashWasm()).argon2Verify({ password, hash: user?.passwordHash ?? fallback });
    return user && user.passwordHash && ok && !user.disabledAt ? user : null;
  }

  /** The user behind an external identity; links to an existing account only by a verified email. */
  async external(provider: string, p: ExternalProfile): Promise<{ id: string }> {
    const identity = await this.prisma.identity.findUnique({ where: { provider_subject: { provider, subject: p.subject } }, include: { user: true } });
    if (identity) {
      await this.prisma.user.update({ where: { id: identity.userId }, data: { username: p.username ?? identity.user.username, avatarUrl: p.avatarUrl ?? identity.user.avatarUrl } });
      return identity.user;
    }
    const email = p.email?.toLowerCase() ?? null;
    let user = email && p.emailVerified ? await this.prisma.user.findUnique({ where: { email } }) : null;
    if (!user) {
      const taken = email ? await this.prisma.user.findUnique({ where: { email } }) : null;
      user = await this.prisma.user.create({
        data: { id: newId('usr'), email: taken ? null : email, name: p.name, username: p.username ?? p.name, avatarUrl: p.avatarUrl, planId: this.defaultPlan },
      });
    }
    await this.prisma.identity.create({ data: { id: newId('idn'), userId: user.id, provider, subject: p.subject, email } });
    return user;
  }
}
