// A client's own request id (`X-Client-Request-Id`, OpenAI's name for it, or `X-Request-Id`, which
// proxies set): validated and kept beside the gateway's id, never instead of it (decision 0034).
// The gateway's id (`req_…`) is the key of the request's ledger row, its request-log record, its
// trail and its log lines; the client's is a bounded label it can look its requests up by
// (GET /v1/requests?client_request_id=…) and is echoed back in `X-Client-Request-Id`.
import type { IncomingHttpHeaders } from 'node:http';
import { CLIENT_REQUEST_ID, MAX_CLIENT_REQUEST_ID } from '../../contract/common.ts';
import { GatewayError } from '../runtime/errors.ts';

/**
 * The client's request id, or null when it sent none. One it cannot have meant (too long, control
 * characters, bytes beyond ASCII) is refused: 400 naming the header, before anything is recorded.
 */
export function clientRequestIdOf(headers: IncomingHttpHeaders): string | null {
  const header = headers['x-client-request-id'] !== undefined ? 'x-client-request-id' : 'x-request-id';
  const raw = headers[header];
  if (raw === undefined) return null;
  // Node joins a repeated X-Request-Id with ", "; an array only comes from a header it keeps apart.
  const value = (Array.isArray(raw) ? raw.join(', ') : raw).trim();
  if (!value) return null;
  if (value.length > MAX_CLIENT_REQUEST_ID || !CLIENT_REQUEST_ID.test(value)) {
    throw new GatewayError(
      400,
      'invalid_request_error',
      'invalid_request_id',
      `The ${header === 'x-request-id' ? 'X-Request-Id' : 'X-Client-Request-Id'} header must be at most ${MAX_CLIENT_REQUEST_ID} printable ASCII characters (a UUID is typical); send another or none.`,
      header,
    );
  }
  return value;
}
