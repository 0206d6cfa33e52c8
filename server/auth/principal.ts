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
  /**
   * Spend budgets in US dollars set on this key (caps beside the plan's per-key budgets: the lower
   * binds) and on its user (instead of the plan's user budgets); absent where none is set.
   */
  budgets?: PrincipalBudgets;
  /** The request log keeps this key's request and response bodies (an operator's switch on the key). */
  captureBodies?: true;
};

export type PrincipalBudgets = { keyDaily?: string; keyMonthly?: string; userDaily?: string; userMonthly?: string };

type Money = { toFixed(): string } | null;
/** The budgets stored on a key and its user (decimals, null where unset), or undefined when none is. */
export function principalBudgets(user: { dailyBudgetUsd: Money; monthlyBudgetUsd: Money }, key?: { dailyBudgetUsd: Money; monthlyBudgetUsd: Money }): PrincipalBudgets | undefined {
  const out: PrincipalBudgets = {};
  if (key?.dailyBudgetUsd) out.keyDaily = key.dailyBudgetUsd.toFixed();
  if (key?.monthlyBudgetUsd) out.keyMonthly = key.monthlyBudgetUsd.toFixed();
  if (user.dailyBudgetUsd) out.userDaily = user.dailyBudgetUsd.toFixed();
  if (user.monthlyBudgetUsd) out.userMonthly = user.monthlyBudgetUsd.toFixed();
  return Object.keys(out).length ? out : undefined;
}

/** The dashboard's session acts for the user across all their keys. */
export const isSession = (p: Principal) => p.kind === 'session';
