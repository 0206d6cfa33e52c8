/** Who a request acts for: the key it is billed to, its user and plan. */
export type Principal = {
  kind: 'api_key' | 'oauth';
  keyId: string;
  userId: string;
  planId: string;
  /**
   * Set when the credential was issued to an app (an OAuth access token, or the grant's `api_key`):
   * the app acts for the user, for inference only.
   */
  appId?: string;
};
