import type { BackoffPolicy } from '@causeway/workflow';
import type { Logger } from '../logger';

/**
 * How a loop that lost the database tries again: quick at first (a dropped connection is
 * usually back at once), doubling, and capped low enough that work resumes within seconds
 * of the server coming back.
 */
export const reconnectBackoff: BackoffPolicy = Object.freeze({
  initialIntervalMs: 250,
  backoffCoefficient: 2,
  maximumIntervalMs: 5_000,
});

/**
 * Consecutive failures of one loop and the wait before its next try. Half the ceiling is
 * fixed and half is jitter: the fixed half means a loop never spins however unlucky the
 * draw, the jitter means processes that lost the server together do not return in step.
 */
export class Backoff {
  private failures = 0;
  private retryAt = 0;

  constructor(
    private readonly policy: BackoffPolicy = reconnectBackoff,
    private readonly random: () => number = Math.random,
  ) {}

  /** Failures since the last success. */
  get failing(): number {
    return this.failures;
  }

  /** Records a failure; returns how long to wait before the next try. */
  failed(): number {
    this.failures += 1;
    const ceiling = reconnectCeilingMs(this.failures, this.policy);
    const delayMs = Math.floor(ceiling / 2 + (ceiling / 2) * this.random());
    this.retryAt = performance.now() + delayMs;
    return delayMs;
  }

  succeeded(): void {
    this.failures = 0;
    this.retryAt = 0;
  }

  /** For a loop on a fixed timer: false while the wait after the last failure runs. */
  get due(): boolean {
    return performance.now() >= this.retryAt;
  }

  /**
   * One pass of a loop on a fixed timer, unless the wait after its last failure still runs
   * (then null): a success resets the backoff, a failure is logged with the wait it starts.
   */
  attempt(pass: () => Promise<unknown>, logger: Logger, message: string): Promise<void> | null {
    if (!this.due) return null;
    return pass().then(
      () => this.succeeded(),
      (error: unknown) => {
        const retryInMs = this.failed();
        logger.warn({ err: error, failures: this.failures, retryInMs }, message);
      },
    );
  }
}

/** The ceiling of the wait after `failures` failures: the policy's exponential, capped. */
export function reconnectCeilingMs(
  failures: number,
  policy: BackoffPolicy = reconnectBackoff,
): number {
  return Math.min(
    policy.maximumIntervalMs,
    policy.initialIntervalMs * policy.backoffCoefficient ** Math.max(0, failures - 1),
  );
}
