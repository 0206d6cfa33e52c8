// Which methods each known path takes, so a request with another method is told so (405 with
// `Allow`) instead of hearing that the path does not exist (404). Filled from Fastify's onRoute hook:
// every route of every scope, the contract's and the pages', as it is added.
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../runtime/errors.ts';

type Route = { methods: Set<string>; pattern: RegExp };

/** A route's path (`/v1/jobs/:id`, `/docs/*`: find-my-way's and ts-rest's syntax) as an anchored regular expression. */
export function pathPattern(url: string): RegExp {
  const source = url
    .split(/(:[A-Za-z0-9_]+(?:\([^)]*\))?|\*)/)
    .map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`);
}

export class RouteMethods {
  private readonly routes = new Map<string, Route>();

  add(method: string | string[], url: string): void {
    // A catch-all matches every path: it says nothing about which methods a path takes.
    if (url === '*' || url === '/*') return;
    const route = this.routes.get(url) ?? { methods: new Set<string>(), pattern: pathPattern(url) };
    for (const m of Array.isArray(method) ? method : [method]) {
      route.methods.add(m.toUpperCase());
      // Fastify answers HEAD wherever it answers GET.
      if (m.toUpperCase() === 'GET') route.methods.add('HEAD');
    }
    this.routes.set(url, route);
  }

  /** The methods routes take at `path` (no query), sorted; empty for a path no route has. */
  allowed(path: string): string[] {
    const methods = new Set<string>();
    for (const r of this.routes.values()) if (r.pattern.test(path)) r.methods.forEach((m) => methods.add(m));
    return [...methods].sort();
  }

  /** Records the routes `app` and its child scopes add from now on. */
  static track(app: FastifyInstance): RouteMethods {
    const table = new RouteMethods();
    app.addHook('onRoute', (route) => table.add(route.method, route.url ?? route.path));
    return table;
  }
}

/** 405 for `method` on a path whose routes take `allowed`, with the `Allow` header RFC 9110 asks for. */
export const methodNotAllowed = (method: string, path: string | null, allowed: string[]) =>
  new GatewayError(
    405,
    'invalid_request_error',
    'method_not_allowed',
    `${method} is not allowed on ${path ?? 'this path'}: it takes ${allowed.join(', ')}.`,
    null,
    { allow: allowed.join(', ') },
  );
