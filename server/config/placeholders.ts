// Values that stand in for a credential in templates and examples, never a credential themselves:
// the gateway refuses to start with one (GATEWAY_SECRET, GATEWAY_ADMIN_TOKEN, a provider's key) rather
// than run signing links with `REPLACE-ME` or send `changeme` to a provider (decision 0033). The list
// covers this repository's own templates (deploy/kubernetes/secret.yaml's REPLACE-ME, the README's
// `…`; test/config/secrets.test.ts reads them) and the usual ones of others' (.env.example files,
// Helm values, vendors' docs).

/** Words that are a placeholder when they are the whole value (or the whole value repeated), compared without case or separators. */
const WORDS = [
  'replaceme',
  'replacethis',
  'changeme',
  'changethis',
  'changeit',
  'secret',
  'mysecret',
  'supersecret',
  'password',
  'passwd',
  'placeholder',
  'todo',
  'tbd',
  'fixme',
  'example',
  'dummy',
  'null',
  'undefined',
  'none',
  'empty',
  'redacted',
  'apikey',
  'token',
  'secretkey',
  'insertkeyhere',
  'keyhere',
  'setme',
  'fillme',
  'fillmein',
  'generateme',
];

/** Markers that make a value a placeholder wherever they appear in it (a random key never spells them). */
const MARKERS = ['replaceme', 'changeme', 'changethis', 'placeholder', 'insertyour', 'putyour', 'enteryour', 'addyour', 'pasteyour', 'yourkey', 'yourapikey', 'yoursecret', 'yourtoken', 'yourpassword'];

/** Written so a template engine or a shell would have filled it in: `<…>`, `{{…}}`, `[…]`, `${VAR}`, `$VAR`, `%VAR%`. */
const TEMPLATED = [/^<.*>$/s, /^\{\{.*\}\}$/s, /^\[.*\]$/s, /^\$\{[^}]*\}$/, /^\$[A-Za-z_][A-Za-z0-9_]*$/, /^%[A-Za-z_][A-Za-z0-9_]*%$/];

/**
 * Whether `value` is a template's placeholder rather than a credential: `REPLACE-ME`, `changeme`,
 * `<your key>`, `${OPENAI_API_KEY}` left unexpanded, `sk-xxxx`, `sk-...`, `********`, `your-api-key-here`.
 * Short values are not placeholders by length alone: `k` or `test-key` are fine (tests use them).
 */
export function isPlaceholder(value: string, opts: { keylessWords?: boolean } = {}): boolean {
  const v = value.trim().replace(/^(['"])(.*)\1$/s, '$2').trim();
  if (!v) return false;
  if (TEMPLATED.some((re) => re.test(v))) return true;
  // An ellipsis: `sk-...`, `…` (the README's), `abc...xyz` (a key shown shortened).
  if (v.includes('...') || v.includes('…')) return true;
  const letters = v.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (letters && MARKERS.some((m) => letters.includes(m))) return true;
  // `YOUR_OPENAI_API_KEY`, `your-token-here`.
  if (/^your.*(key|secret|token|password|here)$/.test(letters)) return true;
  // What a server that needs no key is given (`EMPTY` in vLLM's docs, `none`, `dummy`, `xxx`) stays a key.
  if (opts.keylessWords) return false;
  // One character repeated (`xxxxxxxx`, `********`, `00000000`), also after a vendor prefix (`sk-proj-XXXX`).
  const rest = v.replace(/^(?:[A-Za-z]{1,10}[-_])+/, '');
  if (/^(.)\1{2,}$/su.test(v) || (rest !== v && /^(.)\1{2,}$/su.test(rest))) return true;
  if (!letters) return false;
  return WORDS.some((w) => letters.replaceAll(w, '') === '') || /^x{3,}$/.test(letters);
}

/** The gateway secret's shortest accepted length, in bytes (256 bits; `openssl rand -base64 32` gives 44). */
export const SECRET_MIN_BYTES = 32;

const quoted = (v: string) => JSON.stringify(v.length > 40 ? `${v.slice(0, 37)}...` : v);

/**
 * What is wrong with the secrets the environment sets for the gateway itself: GATEWAY_SECRET (at
 * least 32 bytes, not a placeholder) and GATEWAY_ADMIN_TOKEN (not a placeholder). Refused at start-up
 * and by `config check`, with what to do. A placeholder is quoted (it is no secret); a short real value never is.
 */
export function secretProblems(env: NodeJS.ProcessEnv): string[] {
  const problems: string[] = [];
  const secret = env.GATEWAY_SECRET;
  const unsetSecret = 'or unset it: the gateway then keeps its own (DATA_DIR/secret; with DATABASE_URL, in the database)';
  if (secret && isPlaceholder(secret)) {
    problems.push(
      `GATEWAY_SECRET is a template's placeholder (${quoted(secret)}), not a secret: set it to at least ${SECRET_MIN_BYTES} random bytes (e.g. openssl rand -base64 32), the same on every instance, ${unsetSecret}.`,
    );
  } else if (secret && Buffer.byteLength(secret, 'utf8') < SECRET_MIN_BYTES) {
    problems.push(
      `GATEWAY_SECRET is ${Buffer.byteLength(secret, 'utf8')} bytes long: it signs hosted-file links and sign-in state and derives OAuth grants' keys, so it must be at least ${SECRET_MIN_BYTES} random bytes. ` +
        `Set it to e.g. the output of openssl rand -base64 32 (the same on every instance), ${unsetSecret}. ` +
        "Replacing it voids hosted-file links and sign-in state, and changes every OAuth grant's api_key (apps read the new one from userinfo).",
    );
  }
  const token = env.GATEWAY_ADMIN_TOKEN;
  if (token && isPlaceholder(token)) {
    problems.push(
      `GATEWAY_ADMIN_TOKEN is a template's placeholder (${quoted(token)}), not a token: anyone could guess it and use the admin API. Set it to a random value (e.g. openssl rand -base64 32), the same on every instance, or unset it: the gateway then creates one in DATA_DIR/admin-token.`,
    );
  }
  return problems;
}

/**
 * Why a credential of the config (`what`: "openai's API key"), from `variable` when known, is
 * refused, or null. `unset` says what leaving it out does. Only a placeholder is ever quoted.
 * `keyless` (a provider's key): only what a template writes is refused — a local OpenAI-compatible
 * server that needs no key is given one all the same, and its docs' word for it (`EMPTY`, `none`,
 * `dummy`, `xxx`) is the operator's choice.
 */
export function credentialProblem(value: string, what: string, variable?: string, unset = 'or leave it out', keyless = false): string | null {
  if (!isPlaceholder(value, { keylessWords: keyless })) return null;
  return variable
    ? `${variable} is a template's placeholder (${quoted(value)}), not ${what}: set ${variable} to the real one, ${unset}`
    : `${quoted(value)} is a template's placeholder, not ${what}: write the real one (better: read it from the environment, \${NAME}), ${unset}`;
}
