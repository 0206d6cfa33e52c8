// Waiting for something at most so long: a stop, a start-up step, a drain that must not hang.

/**
 * Resolves `true` when `p` settles first, `false` after `ms`; a rejection of `p` rejects. The
 * timer never outlives the race (a stopping process must be free to exit).
 */
export function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), Math.max(0, ms));
    }),
  ]).finally(() => clearTimeout(timer));
}
