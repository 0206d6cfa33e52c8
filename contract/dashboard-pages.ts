// The dashboard's pages, in the order of its navigation: the paths the gateway serves the dashboard
// at (server/web/dashboard.ts) and the pages the dashboard renders (web/src/main.tsx). It imports
// nothing, as the dashboard's bundle includes it (scripts/build-web.mjs).
export const DASHBOARD_PATHS = ['/dashboard', '/usage', '/requests', '/keys', '/jobs', '/models', '/apps', '/connected', '/admin/users', '/admin/keys', '/admin/usage', '/admin/requests', '/admin/health'] as const;

export type DashboardPath = (typeof DASHBOARD_PATHS)[number];
