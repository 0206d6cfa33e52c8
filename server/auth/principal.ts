/** Who a request acts for: the key it is billed to, its user and plan. */
export type Principal = {
  kind: 'api_key' | 'oauth';
  keyId: string;
  userId: string;
  planId: string;
  /** OAuth only: the app acting for the user and the granted scopes. */
  appId?: string;
  scopes?: string[];
};
