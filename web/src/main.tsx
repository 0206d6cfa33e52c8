// The dashboard: one page per path, all rendered here from the API; the gateway serves this
// script for every dashboard path once the visitor is signed in.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { DASHBOARD_PATHS, type DashboardPath } from '../../contract/dashboard-pages.ts';
import { csrfToken, loadSession, type Session } from './api.ts';
import { AdminHealth, AdminKeys, AdminUsage, AdminUsers } from './pages/admin.tsx';
import { Apps } from './pages/apps.tsx';
import { Connected } from './pages/connected.tsx';
import { Jobs } from './pages/jobs.tsx';
import { Keys } from './pages/keys.tsx';
import { Models } from './pages/models.tsx';
import { Overview } from './pages/overview.tsx';
import { AdminRequests, Requests } from './pages/requests.tsx';
import { Usage } from './pages/usage.tsx';
import { onLinkClick, usePath } from './router.ts';
import { Alert, Loading } from './ui.tsx';
import './styles.css';

type Page = { label: string; view: (p: { session: Session }) => preact.JSX.Element; admin?: true };
type Route = Page & { path: DashboardPath };
/** The page at each of the contract's dashboard paths (the gateway serves the dashboard at those). */
const pages: Record<DashboardPath, Page> = {
  '/dashboard': { label: 'Overview', view: Overview },
  '/usage': { label: 'Usage', view: Usage },
  '/requests': { label: 'Requests', view: Requests },
  '/keys': { label: 'API keys', view: Keys },
  '/jobs': { label: 'Jobs', view: Jobs },
  '/models': { label: 'Models', view: Models },
  '/apps': { label: 'OAuth apps', view: Apps },
  '/connected': { label: 'Connected apps', view: Connected },
  '/admin/users': { label: 'Users', view: AdminUsers, admin: true },
  '/admin/keys': { label: 'All keys', view: AdminKeys, admin: true },
  '/admin/usage': { label: 'All usage', view: AdminUsage, admin: true },
  '/admin/requests': { label: 'All requests', view: AdminRequests, admin: true },
  '/admin/health': { label: 'Upstream health', view: AdminHealth, admin: true },
};
/** In the contract's order, which is the navigation's. */
const routes: Route[] = DASHBOARD_PATHS.map((path) => ({ path, ...pages[path] }));

function NavLinks({ path, list }: { path: string; list: Route[] }) {
  return (
    <ul>
      {list.map((r) => (
        <li>
          <a href={r.path} aria-current={path === r.path ? 'page' : undefined}>
            {r.label}
          </a>
        </li>
      ))}
    </ul>
  );
}

function Shell({ session }: { session: Session }) {
  const path = usePath();
  const isAdmin = session.user.role === 'admin';
  const route = routes.find((r) => r.path === path && (!r.admin || isAdmin));
  const who = session.user.name ?? session.user.username ?? session.user.email ?? session.user.id;
  // On a phone the navigation is one row that scrolls sideways: the current page's link is brought
  // into view (the row scrolls, never the page), also when the window becomes that narrow.
  useEffect(() => {
    const show = () => {
      const nav = document.querySelector<HTMLElement>('nav[aria-label="Dashboard"]');
      const link = nav?.querySelector<HTMLElement>('[aria-current="page"]');
      if (!nav || !link) return;
      const [n, l] = [nav.getBoundingClientRect(), link.getBoundingClientRect()];
      nav.scrollLeft += l.left - n.left - (n.width - l.width) / 2;
    };
    show();
    const narrow = matchMedia('(max-width: 760px)');
    narrow.addEventListener('change', show);
    return () => narrow.removeEventListener('change', show);
  }, [path]);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/dashboard">
          Model Gateway
        </a>
        <div class="who">
          <span class="user" title={session.user.email ?? undefined}>
            {who}
            {isAdmin && <span class="badge info">admin</span>}
          </span>
          <form method="post" action="/signout">
            <input type="hidden" name="csrf" value={csrfToken()} />
            <button type="submit" class="secondary small" id="signout">
              Sign out
            </button>
          </form>
        </div>
      </header>
      <div class="layout">
        <nav aria-label="Dashboard">
          <NavLinks path={path} list={routes.filter((r) => !r.admin)} />
          {isAdmin && (
            <>
              <h2 class="nav-heading">Operator</h2>
              <NavLinks path={path} list={routes.filter((r) => r.admin)} />
            </>
          )}
        </nav>
        <main id="main">
          {route ? (
            <route.view session={session} />
          ) : (
            <>
              <h1>Not found</h1>
              <p>
                There is no dashboard page at <code>{path}</code>. <a href="/dashboard">Go to the overview</a>.
              </p>
            </>
          )}
        </main>
      </div>
    </>
  );
}

function App() {
  const [session, setSession] = useState<Session | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    loadSession().then(setSession, (err: Error) => setError(err.message));
  }, []);
  if (error) return <Alert>The dashboard could not start: {error}</Alert>;
  if (!session) return <Loading what="your account" />;
  return <Shell session={session} />;
}

document.addEventListener('click', onLinkClick);
render(<App />, document.getElementById('app')!);
