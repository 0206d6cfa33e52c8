// The words a capability and the pipeline speak in, defined by the stages that own them: an
// upstream candidate (plan), a hold and its meter (admit, settle), what a call did (settle).
export type { Target, TextTarget } from '../routing/targets.ts';
export type { Routed } from '../routing/router.ts';
export type { Blame, Release } from '../routing/failover.ts';
export type { Meter, Metering, Outcome } from '../billing/metered.ts';
