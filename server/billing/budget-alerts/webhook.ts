// One delivery attempt of a budget alert to the operator's webhook: the documented body (built
// from the alert's row, so every attempt on any instance sends the same bytes), its headers and
// signature, a bounded time. Its outcome never carries the URL or the secret: a status, a time-out
// or an error code.
import { Agent, request } from 'undici';
import { signBudgetAlert } from './signing.ts';
import type { BudgetAlertView, BudgetPeriod, BudgetScope } from './store.ts';

/** What the webhook receives (the JSON body, byte for byte the same at every attempt). */
export type BudgetAlertPayload = {
  type: 'budget.threshold_crossed';
  id: string;
  scope: BudgetScope;
  user_id: string;
  key_id: string | null;
  period: BudgetPeriod;
  period_start: string;
  threshold_percent: number;
  limit_usd: string;
  spent_usd: string;
  created_at: string;
};

export const BUDGET_ALERT_EVENT = 'budget.threshold_crossed';

/** The webhook's JSON body for an alert. */
export function budgetAlertPayload(a: BudgetAlertView): BudgetAlertPayload {
  return {
    type: BUDGET_ALERT_EVENT,
    id: a.id,
    scope: a.scope,
    user_id: a.user_id,
    key_id: a.key_id,
    period: a.period,
    period_start: a.period_start,
    threshold_percent: a.threshold_percent,
    limit_usd: a.limit_usd,
    spent_usd: a.spent_usd,
    created_at: a.created_at,
  };
}

/** Why an attempt failed, for last_error and the logs: a status, a time-out or an error code, never a message (it may quote the URL). */
function failureOf(err: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `timeout after ${timeoutMs} ms`;
  const code = (e: unknown): string | undefined => {
    const c = (e as { code?: unknown } | null)?.code;
    return typeof c === 'string' && /^[A-Z0-9_]+$/.test(c) ? c : undefined;
  };
  const found = code(err) ?? code((err as { cause?: unknown } | null)?.cause);
  return found ? `network error: ${found}` : 'network error';
}

/** An attempt's end: answered 2xx, failed (why), or cut short by the process stopping. */
export type DeliveryOutcome = { ok: true } | { ok: false; error: string } | { aborted: true };

export type Webhook = { url: string; host: string; secret: string };

export class WebhookSender {
  private readonly agent: Agent;

  constructor(
    readonly webhook: Webhook,
    private readonly timeoutMs: number,
  ) {
    this.agent = new Agent({ connect: { timeout: timeoutMs }, keepAliveTimeout: 10_000, headersTimeout: 0, bodyTimeout: 0 });
  }

  /** One attempt, connection to last byte within the time-out; `closing` ends it as aborted. */
  async send(alert: BudgetAlertView, closing: AbortSignal): Promise<DeliveryOutcome> {
    const body = JSON.stringify(budgetAlertPayload(alert));
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.timeoutMs);
    const onClose = () => controller.abort();
    closing.addEventListener('abort', onClose, { once: true });
    try {
      const res = await request(this.webhook.url, {
        method: 'POST',
        dispatcher: this.agent,
        signal: controller.signal,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'model-gateway (budget alerts)',
          'x-gateway-event': BUDGET_ALERT_EVENT,
          'x-gateway-delivery': alert.id,
          // The wire's time, not the (test-replaceable) clock of the limits: receivers check it against theirs.
          'x-gateway-signature': signBudgetAlert(this.webhook.secret, body, Date.now() / 1000),
        },
        body,
      });
      await res.body.dump().catch(() => {});
      return res.statusCode >= 200 && res.statusCode < 300 ? { ok: true } : { ok: false, error: `HTTP ${res.statusCode}` };
    } catch (err) {
      if (closing.aborted && !timedOut) return { aborted: true };
      return { ok: false, error: failureOf(err, timedOut, this.timeoutMs) };
    } finally {
      clearTimeout(timer);
      closing.removeEventListener('abort', onClose);
    }
  }

  close(): Promise<void> {
    return this.agent.close().catch(() => {});
  }
}
