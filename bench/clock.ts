/** Epoch milliseconds with sub-millisecond resolution, comparable across processes. */
export const now = (): number => performance.timeOrigin + performance.now();

export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Runs `fn(i)` for every i in [0, n) from `concurrency` loops, each awaiting one call at a time. */
export async function parallelFor(
  n: number,
  concurrency: number,
  fn: (index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const loop = async (): Promise<void> => {
    for (let index = next++; index < n; index = next++) await fn(index);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, loop));
}
