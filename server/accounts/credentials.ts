// What sign-up accepts: a plausible email address, and a password that is not among the first
// guesses of anyone trying accounts (length, one repeated character, the common-password list of
// zxcvbn-ts, the email's own name).

export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 256;
const EMAIL_MAX_LENGTH = 254;

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

// One @, no spaces or control characters, a dotted domain: a sanity check, not RFC 5322.
const EMAIL = /^[^\s@\u0000-\u001f\u007f]{1,64}@[^\s@.\u0000-\u001f\u007f]+(\.[^\s@.\u0000-\u001f\u007f]+)+$/;
export const validEmail = (email: string) => email.length <= EMAIL_MAX_LENGTH && EMAIL.test(email) && email.isWellFormed();

/** A display name as stored: at most 200 characters, no control characters, well-formed. */
export const NAME_MAX_LENGTH = 200;
export const validName = (name: string) => name.length <= NAME_MAX_LENGTH && !/[\u0000-\u001f\u007f]/.test(name) && name.isWellFormed();

// Loaded at the first sign-up, not at start: most gateways see few, and the list is ~3 MB in memory.
// Shorter entries are refused by length already.
let common: Promise<Set<string>> | undefined;
const commonPasswords = () =>
  (common ??= import('@zxcvbn-ts/language-common').then(
    ({ dictionary }) => new Set((dictionary['passwords-common'] as string[]).filter((p) => p.length >= PASSWORD_MIN_LENGTH)),
  ));

/** Why sign-up refuses `password` for `email` (normalised), or null. */
export async function passwordProblem(password: string, email: string): Promise<string | null> {
  if (password.length < PASSWORD_MIN_LENGTH) return `Choose a longer password: at least ${PASSWORD_MIN_LENGTH} characters.`;
  if (password.length > PASSWORD_MAX_LENGTH) return `Choose a shorter password: at most ${PASSWORD_MAX_LENGTH} characters.`;
  const lower = password.toLowerCase();
  if (/^(.)\1*$/su.test(lower)) return 'Choose a stronger password: not one character repeated.';
  if ((await commonPasswords()).has(lower)) return 'Choose a stronger password: this one is among the most common passwords.';
  const name = email.split('@')[0]!;
  if (name.length >= 3 && lower.includes(name)) return 'Choose a stronger password: it must not contain your email address.';
  return null;
}
