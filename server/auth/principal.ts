/** Who a request acts for: the key it is billed to, its user and plan. */
export type Principal = {
  /** `session`: the dashboard's signed-in user; no key (`keyId` is empty), on the routes that accept it only. */
  kind: 'api_key' | 'oauth' | 'session';
  keyId: string;
  userId: string;
  planId: string;
  /**
   * Set when the credential was issued to an app (an OAuth access token, or the grant's `api_key`):
   * the app acts for the user, for inference only.
   */
  appId?: string;
};

/** The dashboard's session acts for the user across all their keys. */
export const isSession = (p: Principal) => p.kind === 'session';
