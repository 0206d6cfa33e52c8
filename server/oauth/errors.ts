/** An OAuth protocol error, answered as RFC 6749 §5.2 `{error, error_description}`. */
export class OAuthError extends Error {
  constructor(
    readonly error: 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unauthorized_client' | 'unsupported_grant_type' | 'invalid_scope' | 'invalid_token' | 'access_denied' | 'server_error',
    readonly description: string,
    readonly status: 400 | 401 = error === 'invalid_client' || error === 'invalid_token' ? 401 : 400,
  ) {
    super(description);
    this.name = 'OAuthError';
  }
  body() {
    return { error: this.error, error_description: this.description };
  }
}
