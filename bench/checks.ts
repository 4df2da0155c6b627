import type pg from 'pg';
import { type Mode, transitionsPerWorkflow, type Verification } from './system';

/** Workflow counts by state, for `System.counts` of the systems with a workflows table. */
export async function workflowCounts(
  pool: pg.Pool,
  table: string,
  name: string,
): Promise<{ total: number; done: number; open: number; failed: number }> {
  const { rows } = await pool.query(
    `select count(*)::int as total,
            count(*) filter (where state = 'succeeded')::int as done,
            count(*) filter (where state in ('dead', 'cancelled'))::int as failed
       from ${table} where name = $1`,
    [name],
  );
  const row = rows[0];
  return {
    total: row.total,
    done: row.done,
    failed: row.failed,
    open: row.total - row.done - row.failed,
  };
}

/** A verification from counts read back and the counts expected: each mismatch is a problem. */
export function verificationOf(
  checks: Readonly<Record<string, number>>,
  want: Readonly<Record<string, number>>,
): Verification {
  const problems = Object.entries(want)
    .filter(([key, value]) => checks[key] !== value)
    .map(([key, value]) => `${key}: ${checks[key]}, expected ${value}`);
  return { ok: problems.length === 0, problems, checks };
}

/**
 * What every system that implements the contract must show after a run: the workflows by state,
 * their tasks, one log row per edge and no log mismatch (R25). Returns the steps per workflow
 * and the open (unfinished) workflows for system-specific additions.
 */
export function specExpectations(
  mode: Mode,
  expected: { readonly workflows: number; readonly finished: number },
): { want: Record<string, number>; steps: number; open: number } {
  const perWorkflow = transitionsPerWorkflow[mode];
  const steps = mode === 'workflow' ? 3 : 1;
  const open = expected.workflows - expected.finished;
  return {
    steps,
    open,
    want: {
      workflows: expected.workflows,
      succeeded: expected.finished,
      queued: open,
      tasks: expected.workflows * steps,
      transitions: expected.finished * perWorkflow.finished + open * perWorkflow.submitted,
      logMismatches: 0,
    },
  };
}

/**
 * Causeway's concurrency keys after a run: with `keys` (w2k) every one of the `tasks` keyed and
 * every key used; without, no task keyed.
 */
export function keyedExpectations(keys: number | undefined, tasks: number): Record<string, number> {
  return keys === undefined
    ? { keyedTasks: 0 }
    : { keyedTasks: tasks, keys: Math.min(keys, tasks) };
}
