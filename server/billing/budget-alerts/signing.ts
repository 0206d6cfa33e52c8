// The budget alert webhook's signature (docs/billing.md "Budget alerts"): HMAC-SHA256 over
// "<t>.<raw body>", Stripe's scheme, and what a receiver does to check it.
import { createHmac } from 'node:crypto';
import { constantTimeEqualHex } from '../../runtime/secrets.ts';

/** `X-Gateway-Signature`: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`. */
export function signBudgetAlert(secret: string, body: string, unixSeconds: number): string {
  const t = Math.floor(unixSeconds);
  return `t=${t},v1=${signatureOf(secret, t, body)}`;
}

const signatureOf = (secret: string, t: number, body: string) => createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');

/**
 * What a receiver does with `X-Gateway-Signature` (docs/billing.md): recompute the HMAC over
 * "<t>.<raw body>" with the shared secret, compare in constant time, and refuse a `t` too far from
 * its own clock (a replayed delivery).
 */
export function verifyBudgetAlertSignature(secret: string, header: string | undefined, rawBody: string, nowSeconds = Date.now() / 1000, toleranceSeconds = 300): boolean {
  if (!header) return false;
  const parts = header.split(',').map((p) => p.trim().split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > toleranceSeconds) return false;
  const expected = signatureOf(secret, t, rawBody);
  return parts.some(([k, v]) => k === 'v1' && v !== undefined && /^[0-9a-f]+$/i.test(v) && constantTimeEqualHex(v, expected));
}
