// Password guessing is throttled per account (its normalised email, known or not) and per client
// address, in the counter store, so every instance sharing Redis counts the same attempts. An
// attempt is counted before the password is hashed (argon2id costs ~200 ms of CPU) and given back
// when it succeeds, so only failures add up. Sign-ups are counted per address; password-reset mails
// per email (known or not, so a refusal says nothing about the account) and per address.
import { hashSecret } from '../runtime/secrets.ts';
import type { CounterStore } from '../stores/index.ts';
import { normalizeEmail } from '../accounts/credentials.ts';

export type ThrottleLimits = {
  window_minutes: number;
  failures_per_account: number;
  failures_per_address: number;
  signups_per_address: number;
  resets_per_account: number;
  resets_per_address: number;
};
/** Refused until `retryAt` (epoch ms). */
export type Refused = { retryAt: number };

export class SignInThrottle {
  constructor(
    private readonly counters: CounterStore,
    private readonly now: () => number,
    private readonly limits: ThrottleLimits,
  ) {}

  private hit(key: string, cost: number, limit: number) {
    return this.counters.hit(key, cost, limit, this.limits.window_minutes * 60_000, this.now());
  }

  /** Runs `attempt` (which hashes a password) unless the account or the address has no failures left. */
  async guard<T>(email: string, address: string, attempt: () => Promise<T | null>): Promise<Refused | { result: T | null }> {
    // The email is hashed: the counter store need not hold addresses of people.
    const counted: [string, number][] = [
      [`signin:account:${hashSecret(normalizeEmail(email))}`, this.limits.failures_per_account],
      [`signin:address:${address}`, this.limits.failures_per_address],
    ];
    const hits = await Promise.all(counted.map(([key, limit]) => this.hit(key, 1, limit)));
    const giveBack = () => Promise.all(counted.filter((_, i) => hits[i]!.allowed).map(([key]) => this.hit(key, -1, Number.MAX_SAFE_INTEGER)));
    const refused = hits.filter((h) => !h.allowed);
    if (refused.length) {
      await giveBack();
      return { retryAt: Math.max(...refused.map((h) => h.resetAt)) };
    }
    const result = await attempt();
    if (result !== null) await giveBack();
    return { result };
  }

  /** Counts a password-reset request for `email` from `address`; refused when either has none left. */
  async reset(email: string, address: string): Promise<Refused | null> {
    const hits = await Promise.all([
      this.hit(`reset:account:${hashSecret(normalizeEmail(email))}`, 1, this.limits.resets_per_account),
      this.hit(`reset:address:${address}`, 1, this.limits.resets_per_address),
    ]);
    const refused = hits.filter((h) => !h.allowed);
    return refused.length ? { retryAt: Math.max(...refused.map((h) => h.resetAt)) } : null;
  }

  /** Counts a sign-up from `address`; refused when the address has none left. */
  async signUp(address: string): Promise<Refused | null> {
    const h = await this.hit(`signup:address:${address}`, 1, this.limits.signups_per_address);
    return h.allowed ? null : { retryAt: h.resetAt };
  }
}
