// Vendor knowledge lives in the vendor's folder (docs/architecture.md, "A vendor"): this check
// fails when code in server/ outside the vendors' folders (server/providers/<vendor>/) names a
// vendor, in an identifier, a string or a regular expression. Comments may explain; code may not
// know. Inside the vendors' folders one vendor may build on another (OpenAI-compatible servers
// speak OpenAI's wire). `npm run check` runs it.
//
// A vendor is a folder of server/providers/ (its name) with the other names it goes by below.
// Words are compared whole, after splitting identifiers and strings into words (camelCase,
// snake_case, kebab-case, dots, slashes): `geminiModelList` names gemini, `openaiCompatible` names
// openai-compatible (not openai), `isGoodToGo` names nobody.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

// `--root <dir>`: another tree to check (the check's own test).
const rootAt = process.argv.indexOf('--root');
const root = rootAt > 0 ? path.resolve(process.argv[rootAt + 1]!) : fileURLToPath(new URL('..', import.meta.url));
const providers = path.join(root, 'server/providers');

/** Other names a vendor goes by in code: its company, its models' family, its header prefix. */
const ALIASES: Record<string, string[]> = {
  anthropic: ['claude'],
  gemini: ['google', 'goog', 'gcp', 'vertex', 'veo', 'imagen'],
  elevenlabs: ['eleven'],
  openai: ['gpt', 'dall', 'whisper'],
};

/**
 * Files that may name a vendor, each with the vendors it may name and why. Each entry is a debt
 * with its reason: the next change to such a file moves the knowledge to the vendor (or, for a
 * client format, to the format's own folder) and shortens this list.
 */
const ALLOWED: Record<string, { vendors: string[]; why: string }> = {
  'server/client-formats/index.ts': { vendors: ['openai', 'anthropic', 'gemini'], why: 'the one list of client formats: one import and one entry each' },
  'server/providers/registry.ts': { vendors: ['*'], why: 'the one list of vendors and model lists: one import and one entry each' },
  'server/translate/token-count.ts': { vendors: ['openai'], why: 'the tokenizer package (gpt-tokenizer) that estimates every vendor\'s tokens' },
  'server/media/request.ts': { vendors: ['openai'], why: "clients of GPT image models read b64_json: the default response format for those model names, decided before any upstream is chosen" },
  'server/config/schema.ts': { vendors: ['openrouter', 'poe', 'elevenlabs'], why: "the config file's field names and their defaults (catalog_metadata.openrouter, .poe), the operators' interface" },
  // The client formats are named after the vendors whose APIs they are: until each format is a
  // folder of its own (issue 44), these files hold them.
  'server/providers/types.ts': { vendors: ['openai', 'anthropic', 'gemini'], why: 'the text wire formats, named after their APIs' },
  'server/translate/chat.ts': { vendors: ['anthropic', 'gemini'], why: 'client format: chat completions' },
  'server/translate/responses.ts': { vendors: ['anthropic', 'gemini'], why: 'client format: Responses' },
  'server/translate/messages.ts': { vendors: ['anthropic'], why: 'client format: Messages' },
  'server/translate/gemini.ts': { vendors: ['gemini'], why: "client format: Gemini's generateContent" },
  'server/capabilities/text/formats.ts': { vendors: ['openai', 'anthropic', 'gemini'], why: 'the client formats of text generation' },
  'server/capabilities/text/gemini-methods.ts': { vendors: ['gemini'], why: "client format: Gemini's model methods" },
  'server/capabilities/text/index.ts': { vendors: ['gemini'], why: "client format: Gemini's routes" },
  'server/http/router.ts': { vendors: ['gemini'], why: "client format: Gemini's own catalog routes" },
  'server/requests/capture.ts': { vendors: ['gemini'], why: "client format: Gemini's credential header, redacted in captured bodies" },
  'server/requests/query.ts': { vendors: ['openai', 'anthropic', 'gemini'], why: "client formats: the request log's format filter" },
};

const vendors = readdirSync(providers).filter((d) => statSync(path.join(providers, d)).isDirectory());
/** Each vendor's names as word sequences ('openai-compatible' → ['openai', 'compatible']). */
const names = vendors.map((v) => ({ vendor: v, words: [v, ...(ALIASES[v] ?? [])].map((n) => n.split('-')) }));

function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** The vendors a text names: the longest name wins where two start at one word ('openai compatible'). */
function vendorsIn(text: string): string[] {
  const w = words(text);
  const found: string[] = [];
  for (let i = 0; i < w.length; i++) {
    let best: { vendor: string; length: number } | null = null;
    for (const { vendor, words: seqs } of names) {
      for (const seq of seqs) if (seq.every((s, j) => w[i + j] === s) && (!best || seq.length > best.length)) best = { vendor, length: seq.length };
    }
    if (best) {
      found.push(best.vendor);
      i += best.length - 1;
    }
  }
  return found;
}

function* sourceFiles(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (p === path.join(root, 'server/db/generated')) continue;
      yield* sourceFiles(p);
    } else if (/\.(ts|mts|mjs)$/.test(e.name)) yield p;
  }
}

const problems: string[] = [];
/** Allowances that were needed, as `file vendor`: one never needed is a debt paid, to be struck off. */
const used = new Set<string>();
for (const file of sourceFiles(path.join(root, 'server'))) {
  const rel = path.relative(root, file).split(path.sep).join('/');
  const folder = /^server\/providers\/([^/]+)\//.exec(rel)?.[1];
  if (folder && vendors.includes(folder)) continue;
  // A client format named after its vendor's API (server/client-formats/<vendor>/) names that vendor alone.
  const format = /^server\/client-formats\/([^/]+)\//.exec(rel)?.[1];
  const allowed = [...(ALLOWED[rel]?.vendors ?? []), ...(format && vendors.includes(format) ? [format] : [])];
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(rel, text, ts.ScriptTarget.Latest, true);
  const visit = (node: ts.Node): void => {
    const named = ts.isIdentifier(node) || ts.isPrivateIdentifier(node) || ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node) || ts.isRegularExpressionLiteral(node) ? node.text : null;
    if (named !== null) {
      for (const vendor of vendorsIn(named)) {
        if (allowed.includes('*') || allowed.includes(vendor)) {
          used.add(`${rel} ${allowed.includes('*') ? '*' : vendor}`);
          continue;
        }
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        problems.push(`${rel}:${line}: names the vendor '${vendor}' (${JSON.stringify(named.slice(0, 60))}): move this to server/providers/${vendor}/`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}

if (rootAt < 0) {
  for (const [rel, { vendors: allowed }] of Object.entries(ALLOWED)) {
    for (const vendor of allowed) if (!used.has(`${rel} ${vendor}`)) problems.push(`${rel}: no longer names '${vendor}': strike it from ALLOWED in scripts/check-vendor-names.ts`);
  }
}

if (problems.length) {
  console.error(problems.join('\n'));
  console.error(`\n${problems.length} vendor name(s) outside their vendor's folder (scripts/check-vendor-names.ts says why this matters).`);
  process.exit(1);
}
