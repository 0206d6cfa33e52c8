// What `serve` logs as warnings at start-up and `config check` reports: a configuration that loads
// but will refuse some requests. One function, so the two always agree; GET /v1/models/status
// marks the same unservable models `misconfigured`.
import { missingCredential } from '../providers/credentials.ts';
import type { ModelConfig, PlanConfig, ProviderConfig, ResolvedConfig } from '../config/schema.ts';
import { unitOf } from '../config/billing-rules.ts';
import { loopbackOnlyHost } from '../config/loopback.ts';
import { PriceList, type CostEstimate } from '../billing/prices.ts';

/** Why an upstream on this provider can never work, or null (a type that cannot serve the model's endpoint is a config error). */
function unusable(p: ProviderConfig): string | null {
  const missing = missingCredential(p);
  return missing ? `${p.id} ${missing}` : null;
}

/** The models none of whose upstreams can work, in config order, each with why (`claude has no api_key`). */
export function unservableModels(config: ResolvedConfig): Map<string, string> {
  const providers = new Map(config.providers.map((p) => [p.id, p]));
  const out = new Map<string, string>();
  for (const m of config.models) {
    const reasons = m.upstreams.map((u) => unusable(providers.get(u.provider)!));
    if (reasons.every((r) => r !== null)) out.set(m.id, [...new Set(reasons)].join('; '));
  }
  return out;
}

export function configWarnings(config: ResolvedConfig): string[] {
  const warnings = [...config.loadWarnings];
  for (const p of config.providers) {
    const missing = missingCredential(p);
    if (missing) warnings.push(`provider ${p.id} ${missing}: its upstreams are skipped`);
  }
  for (const [model, why] of unservableModels(config)) warnings.push(`model ${model} has no upstream that can serve it: ${why}`);
  // Links in mail leave the machine: without public_url they name the address the gateway listens
  // on (never a request's Host), which a reader elsewhere cannot open.
  if (config.smtp && !config.publicUrl) warnings.push('smtp is set but public_url is not: password-reset mails would link to the address the gateway listens on; set public_url to the address users open');
  for (const [plan, models] of unpricedUnderBudget(config)) {
    warnings.push(
      `plan ${plan} has spend budgets and budget_unpriced_models is refuse, but ${models.length === 1 ? 'model' : 'models'} ${models.join(', ')} ${models.length === 1 ? 'has' : 'have'} no price in the config: ` +
        `their requests on this plan are refused (403 model_price_unknown) unless the catalog metadata (OpenRouter's list, once fetched) gives one. Give each a pricing, or set budget_unpriced_models: allow`,
    );
  }
  // Legal (a rebuild can restore the sums while raw rows remain), but usage reports would show
  // nothing for days the ledger still holds.
  const { retention_days: raw, aggregate_retention_days: sums } = config.ledger;
  if (sums < raw) warnings.push(`ledger.aggregate_retention_days (${sums}) is shorter than ledger.retention_days (${raw}): usage reports lose days whose raw rows are still kept; keep the daily sums at least as long`);
  return warnings;
}

/** The size of a request that a budget holds for each kind of model (billing/service.ts `mostCost`): text in and out, embeddings in only, else one unit of work. */
function budgetEstimate(model: Pick<ModelConfig, 'endpoint'>): CostEstimate {
  const unit = unitOf(model.endpoint);
  if (unit !== 'token') return { unit, quantity: 1 };
  return model.endpoint === 'embeddings' || model.endpoint === 'moderation' ? { input: 1, output: 0 } : { input: 1, output: 1 };
}

const hasBudget = (p: PlanConfig) => [p.daily_budget_usd, p.monthly_budget_usd, p.user_daily_budget_usd, p.user_monthly_budget_usd].some((b) => b !== undefined);

/**
 * Plans with spend budgets, each with the models it may use whose config gives no price for what a
 * budget holds (`budget_unpriced_models: refuse` refuses those requests). Only the config's prices
 * are known here: metadata fetched at run time may fill them in.
 */
export function unpricedUnderBudget(config: Pick<ResolvedConfig, 'plans' | 'models' | 'budgetUnpricedModels'>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  if (config.budgetUnpricedModels !== 'refuse') return out;
  const rank = new Map(config.plans.map((p) => [p.id, p.rank]));
  const unpriced = config.models.filter((m) => new PriceList(m.pricing ?? null).maxCost(budgetEstimate(m)) === null);
  for (const plan of config.plans.filter(hasBudget)) {
    // A premium model is refused to a plan below its required_plan before any budget applies.
    const usable = unpriced.filter((m) => !m.premium || (rank.get(m.required_plan) ?? 0) <= plan.rank);
    if (usable.length) out.set(plan.id, usable.map((m) => m.id));
  }
  return out;
}

/** Who may create an account without an operator, in words, or null when nobody may (the default). */
export function openSignup(config: Pick<ResolvedConfig, 'auth' | 'smtp'>): { who: string; via: string; setting: string } | null {
  const { local, providers } = config.auth;
  const via = [...(local.enabled ? ['the sign-up form'] : []), ...(providers.length ? [`sign-in with ${providers.map((p) => p.id).join(', ')}`] : [])];
  if (!via.length) return null;
  if (local.allow_signup) return { who: 'anyone', via: via.join(' or '), setting: 'auth.local.allow_signup: true' };
  const domains = local.signup_email_domains;
  if (!domains.length) return null;
  // Without smtp the form cannot confirm an address: only providers' verified emails sign up.
  const byDomain = [...(local.enabled && config.smtp ? ['the sign-up form'] : []), ...(providers.length ? [`sign-in with ${providers.map((p) => p.id).join(', ')}`] : [])];
  if (!byDomain.length) return null;
  return { who: `any address at ${domains.join(', ')}`, via: byDomain.join(' or '), setting: `auth.local.signup_email_domains: [${domains.join(', ')}]` };
}

/**
 * Open sign-up on an address others reach (HOST not loopback-only, or a trusted proxy in front):
 * every stranger who signs up spends the operator's provider keys up to the default plan. Said at
 * start-up and by `config check`; never for the defaults (sign-up closed).
 */
export function signupWarnings(config: Pick<ResolvedConfig, 'auth' | 'smtp' | 'trustProxy' | 'defaultPlan' | 'plans'>, env: NodeJS.ProcessEnv): string[] {
  const open = openSignup(config);
  if (!open) return [];
  const host = env.HOST ?? '0.0.0.0';
  const proxied = config.trustProxy !== false;
  if (loopbackOnlyHost(host) && !proxied) return [];
  const where = loopbackOnlyHost(host)
    ? `it listens on ${host} (HOST) but trusts a proxy in front (trust_proxy), which brings others' requests`
    : `it listens on ${host} (HOST${env.HOST ? '' : ', the default'}), reachable from other machines`;
  const plan = config.plans.find((p) => p.id === config.defaultPlan);
  const allowance = plan ? ` Each new account gets the ${plan.id} plan (${plan.daily_tokens} tokens a day per key) on your provider keys.` : '';
  return [
    `sign-up is open to ${open.who} through ${open.via} (${open.setting}), and ${where}.${allowance} ` +
      'If that is not intended, remove that setting (sign-up is then closed: invite users with model-gateway users create and users reset-link), or set HOST=127.0.0.1 to keep the gateway to this machine.',
  ];
}
