/** The time every limit is computed with. Tests replace `now` to move across windows and days. */
export type Clock = { now(): number };
export const systemClock = (): Clock => ({ now: () => Date.now() });
