// Client-side navigation between the dashboard's pages: each page has a real URL the gateway
// serves, so reloads, bookmarks and the back button work.
import { useEffect, useState } from 'preact/hooks';

const listeners = new Set<() => void>();

export function navigate(to: string) {
  if (to === location.pathname + location.search) return;
  history.pushState(null, '', to);
  listeners.forEach((l) => l());
}

addEventListener('popstate', () => listeners.forEach((l) => l()));

export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPath(location.pathname);
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return path;
}

/** The query string (`?key=…`), for pages that keep their state in it (filters, a selection) so a view can be linked and reloaded. */
export function useSearch(): string {
  const [search, setSearch] = useState(location.search);
  useEffect(() => {
    const update = () => setSearch(location.search);
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return search;
}

/** Same-origin link clicks (without modifier keys) navigate in place. */
export function onLinkClick(e: MouseEvent) {
  const a = (e.target as Element).closest?.('a');
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  if (a.origin !== location.origin || a.hasAttribute('download') || a.target || a.dataset.external !== undefined) return;
  e.preventDefault();
  navigate(a.pathname + a.search);
}
