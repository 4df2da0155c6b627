/**
 * Waiting for a scenario's load to drain, with what is left when it does not: the liveness
 * bound's failure names the tasks still live (by state, with a few examples and their last
 * edges), so a stuck task and a slow machine look different.
 */
import { performance } from 'node:perf_hooks';
import { query } from '../../helpers/engine';
import { nonTerminalCount } from './load-driver';

/** Live tasks by state, and a few of them with their last three edges. */
export async function liveTasks(databaseUrl: string): Promise<unknown> {
  const byState = await query(
    databaseUrl,
    `select state, count(*)::int as n from causeway_tasks
      where state not in ('succeeded', 'cancelled', 'dead', 'pending') group by state`,
  );
  const examples = await query(
    databaseUrl,
    `select t.id, t.step, t.state, t.attempt, t.lease_holder, t.lease_expires_at, t.run_at,
            (select json_agg(x order by x.id desc) from (
               select id, from_state, to_state, reason, actor, at from causeway_transitions
                where task_id = t.id order by id desc limit 3) x) as last_edges
       from causeway_tasks t
      where t.state not in ('succeeded', 'cancelled', 'dead', 'pending')
      order by t.updated_at limit 5`,
  );
  return { byState, examples };
}

/**
 * Resolves with the time taken once no workflow is live; throws with `liveTasks` after
 * `boundMs` from `since` (a performance.now() instant). Logs the count every 10 s.
 */
export async function drainWithin(
  databaseUrl: string,
  since: number,
  boundMs: number,
  options: {
    /** Workflows that may stay live (parked on purpose). */
    readonly exempt?: readonly string[];
    /** Called on every poll: throws to end the wait (e.g. a worker process crashed). */
    readonly check?: () => void;
  } = {},
): Promise<number> {
  const logEveryMs = 10_000;
  let nextLog = performance.now() + logEveryMs;
  for (;;) {
    options.check?.();
    const live = await nonTerminalCount(databaseUrl, options.exempt);
    const now = performance.now();
    if (live === 0) return now - since;
    if (now - since > boundMs) {
      throw new Error(
        `liveness: ${live} workflows still live ${Math.round(now - since)} ms after the faults ended (bound ${boundMs} ms): ${JSON.stringify(await liveTasks(databaseUrl))}`,
      );
    }
    if (now >= nextLog) {
      console.log(`drain: ${live} workflows live after ${Math.round(now - since)} ms`);
      nextLog = now + logEveryMs;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
