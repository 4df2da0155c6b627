import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitForOptions {
  /** Give up after this long. Default 5000 ms (below the 20 s test timeout, so this error wins). */
  timeoutMs?: number;
  /** Pause between attempts. Default 20 ms. */
  intervalMs?: number;
  /** What is being waited for; included in the timeout error. */
  description?: string;
}

/**
 * Polls `predicate` until it returns a truthy value, and returns that value.
 * Tests wait on observable conditions with this instead of sleeping for a guessed time.
 *
 * An error thrown by the predicate is rethrown at once (a broken check should fail fast,
 * not after the timeout). Uses node:timers/promises so `vi.useFakeTimers()` cannot stall it.
 */
export async function waitFor<T>(
  predicate: () => T | Promise<T>,
  options: WaitForOptions = {},
): Promise<Exclude<T, false | 0 | '' | null | undefined>> {
  const { timeoutMs = 5000, intervalMs = 20, description = 'condition' } = options;
  const deadline = performance.now() + timeoutMs;
  let attempts = 0;
  for (;;) {
    attempts += 1;
    const value = await predicate();
    if (value) return value as Exclude<T, false | 0 | '' | null | undefined>;
    if (performance.now() >= deadline) {
      throw new Error(
        `waitFor: timed out after ${timeoutMs} ms (${attempts} attempts) waiting for ${description}; ` +
          `last value: ${String(value)}`,
      );
    }
    await sleep(intervalMs);
  }
}
