// Every error code the server can answer is listed in the user guide's Errors section
// (docs/api.md), so a code added in the code without its line in the guide fails here. The codes
// are read from the server's sources with TypeScript's parser, wherever an error is built:
// `new GatewayError(status, type, code, …)`, the `errors.*` helpers (their `code` argument, and
// the defaults of their `code` parameters), status/code tuples (`[431, 'headers_too_large', …]`),
// `code` parameters typed as a union of literals, and the contract's `notFound: { code }` of routes.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url).pathname;

function sources(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'generated' ? [] : sources(rel);
    return e.name.endsWith('.ts') ? [rel] : [];
  });
}

/** Where each `errors.<helper>(…)` takes its code: the argument's index. */
const HELPER_CODE_ARG: Record<string, number> = { invalid: 2, unauthenticated: 1, forbidden: 0, notFound: 1, conflict: 1 };
const CODE = /^[a-z]+(_[a-z0-9]+)+$/;

/** The string literals an expression can evaluate to (both branches of a conditional). */
function literals(e: ts.Expression | undefined): string[] {
  if (!e) return [];
  if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e)) return [e.text];
  if (ts.isConditionalExpression(e)) return [...literals(e.whenTrue), ...literals(e.whenFalse)];
  if (ts.isParenthesizedExpression(e)) return literals(e.expression);
  if (ts.isAsExpression(e)) return literals(e.expression);
  return [];
}

/** Every error code the server's sources build, with the files that build it. */
function serverErrorCodes(): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  const add = (codes: string[], file: string) => codes.filter((c) => CODE.test(c)).forEach((c) => found.set(c, (found.get(c) ?? new Set()).add(file)));
  for (const file of [...sources('server'), ...sources('contract/routes')]) {
    const sf = ts.createSourceFile(file, readFileSync(path.join(root, file), 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      if (ts.isNewExpression(node) && node.expression.getText(sf) === 'GatewayError') add(literals(node.arguments?.[2]), file);
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.expression.getText(sf) === 'errors') {
        const at = HELPER_CODE_ARG[node.expression.name.text];
        if (at !== undefined) add(literals(node.arguments[at]), file);
      }
      if (ts.isParameter(node) && node.name.getText(sf) === 'code') {
        add(literals(node.initializer), file);
        if (node.type && ts.isUnionTypeNode(node.type)) {
          add(node.type.types.flatMap((t) => (ts.isLiteralTypeNode(t) && ts.isStringLiteral(t.literal) ? [t.literal.text] : [])), file);
        }
      }
      // [status, code, message] tuples of errors answered before routing.
      if (ts.isArrayLiteralExpression(node) && node.elements.length >= 2) {
        const [status, code] = node.elements;
        if (status && ts.isNumericLiteral(status) && Number(status.text) >= 400 && Number(status.text) < 600) add(literals(code as ts.Expression), file);
      }
      // A route's `notFound: { code }`: the 404 of an id that cannot exist.
      if (ts.isPropertyAssignment(node) && node.name.getText(sf) === 'notFound' && ts.isObjectLiteralExpression(node.initializer)) {
        for (const p of node.initializer.properties) if (ts.isPropertyAssignment(p) && p.name.getText(sf) === 'code') add(literals(p.initializer), file);
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return found;
}

/** The `code`s written in docs/api.md's Errors section (its table and prose). */
function documentedCodes(): Set<string> {
  const guide = readFileSync(path.join(root, 'docs/api.md'), 'utf8');
  const start = guide.indexOf('\n## Errors\n');
  const end = guide.indexOf('\n## ', start + 1);
  expect(start, 'docs/api.md has an Errors section').toBeGreaterThan(0);
  return new Set([...guide.slice(start, end).matchAll(/`([a-z0-9_]+)`/g)].map((m) => m[1]!));
}

describe('the user guide lists every error code', () => {
  it('finds the codes where the server builds its errors (the reader itself works)', () => {
    const codes = serverErrorCodes();
    // One of each way an error is built, so a reader that stopped seeing one fails here.
    for (const [code, via] of [
      ['model_not_found', 'server/runtime/errors.ts'], // new GatewayError(…, 'model_not_found', …)
      ['invalid_parameter', 'server/runtime/errors.ts'], // a `code` parameter's default
      ['file_not_found', 'server/http/hosted-file.ts'], // errors.notFound(…, 'file_not_found', …)
      ['daily_quota_exceeded', 'server/billing/service.ts'], // a `code` parameter typed as a union
      ['malformed_request', 'server/http/client-errors.ts'], // a [status, code, message] tuple
      ['job_not_found', 'contract/routes/inference.ts'], // a route's notFound
    ] as const) {
      expect([...(codes.get(code) ?? [])], code).toContain(via);
    }
    expect(codes.size).toBeGreaterThan(50);
  });

  it('docs/api.md names each of them in its Errors section', () => {
    const documented = documentedCodes();
    const missing = [...serverErrorCodes()].filter(([code]) => !documented.has(code)).map(([code, files]) => `${code} (${[...files].join(', ')})`);
    expect(missing).toEqual([]);
  });
});
