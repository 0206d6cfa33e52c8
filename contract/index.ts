// The single source of truth for the HTTP interface: every public /v1 route, the admin API
// behind the CLI and dashboard, and the operator endpoints, one file per area under routes/. The
// OpenAPI document and the TypeScript client are generated from this contract (npm run generate);
// the order of the areas here, and of the routes in each, is the order of the document's paths.
import { adminRoutes } from './routes/admin.ts';
import { dashboardRoutes } from './routes/dashboard.ts';
import { geminiInferenceRoutes, geminiMetadataRoutes } from './routes/gemini.ts';
import { inferenceRoutes } from './routes/inference.ts';
import { c } from './routes/meta.ts';
import { metadataRoutes } from './routes/metadata.ts';
import { oauthRoutes } from './routes/oauth.ts';
import { operatorRoutes } from './routes/operator.ts';

export type { RouteMeta } from './routes/meta.ts';

export const contract = c.router({
  inference: c.router({ ...inferenceRoutes, ...geminiInferenceRoutes }),
  metadata: c.router({ ...metadataRoutes, ...geminiMetadataRoutes }),
  oauth: oauthRoutes,
  dashboard: dashboardRoutes,
  admin: adminRoutes,
  operator: operatorRoutes,
});
