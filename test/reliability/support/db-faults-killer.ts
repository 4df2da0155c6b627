import { setTimeout as sleep } from 'node:timers/promises';
import { terminateBackends } from './db-faults-checks';
import type { FaultWindow } from './db-faults-scenario';

/**
 * The pg_terminate_backend fault: for `forMs`, every `everyMs` (± half, so kills land at
 * every point of the processes' work) terminate the database's backends, all of them or only
 * the LISTEN ones. One window; `terminated` counts the backends it ended.
 */
export async function terminateRepeatedly(options: {
  readonly adminUrl: string;
  readonly databaseName: string;
  readonly which: 'all' | 'listen';
  readonly forMs: number;
  readonly everyMs: number;
  readonly resumed: () => Promise<number>;
}): Promise<{ window: FaultWindow; terminated: number; rounds: number }> {
  const startedAt = performance.now();
  let terminated = 0;
  let rounds = 0;
  while (performance.now() - startedAt < options.forMs) {
    const pids = await terminateBackends(options.adminUrl, options.databaseName, options.which);
    terminated += pids.length;
    rounds += 1;
    await sleep(options.everyMs * (0.5 + Math.random()));
  }
  const backAt = performance.now();
  return {
    window: { startedAt, backAt, resumeMs: await options.resumed() },
    terminated,
    rounds,
  };
}
