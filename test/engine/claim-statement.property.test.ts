/**
 * The one-statement claim (`taskClaimInOneStatement`) against the machine's full claim (`claimTasks`):
 * on random stored states, reached by driving the pure machine, both run in a rolled-back
 * transaction over the same rows, and must lease the same tasks in the same order, leave the
 * same task and workflow rows and append the same log rows. Where the statement may not
 * decide (a candidate past its deadline), it must write nothing, and the full claim must be
 * the one that finalizes that deadline.
 *
 * Shared with production on purpose: this is a differential test, and its oracle is the
 * engine's own full claim (`claimTasks`), which the engine model test checks against the pure
 * machine (and the machine against its own independent model). Rows are compared as read with
 * plain SQL (`rowsAfter`); the upstream outputs a leased task is handed are checked against
 * those rows and the test's own `upstreamOf`, never against the engine's row mappers.
 */
import { deriveClaimOutcomes, type WorkflowDefinition } from '@causeway/workflow/internal';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { taskClaimInOneStatement } from '../../packages/engine/src/db/claim/claim-statement';
import { claimTasks } from '../../packages/engine/src/runtime/claim/claim-in-full';
import { claimStatementPlan } from '../../packages/engine/src/runtime/claim/claim-ready-tasks';
import {
  definitions,
  holder,
  rolledBack,
  rowsAfter,
  store,
  upstreamOf,
  useStoredRunsDatabase,
  whileHeld,
  workflowSpec,
} from './stored-runs';

const opened = useStoredRunsDatabase();
const leaseMs = 30_000;
const apply = { definitions, leaseMs, random: () => 0.5 };

/** The claim's own time as NOW and its lease end as NOW+lease; any other time as itself. */
const claimStamp = (claimNow: Date) => (value: Date) => {
  const offset = value.getTime() - claimNow.getTime();
  return offset === 0 || offset === leaseMs ? `NOW+${offset}` : value.toISOString();
};

describe('the one-statement claim', () => {
  it('derives its table from the machine: parents queued and running go to running', () => {
    const derived = deriveClaimOutcomes();
    if (!derived.ok) throw new Error(derived.reason);
    const { rule, reason, parentAfter } = derived.outcomes;
    expect([rule.from, rule.to, reason]).toEqual(['queued', 'leased', 'lease_acquired']);
    expect([rule.lease, rule.attempt, rule.marker, rule.runAt]).toEqual([
      'take',
      'next',
      'reset',
      'clear',
    ]);
    expect(Object.fromEntries(parentAfter)).toEqual({
      queued: 'running',
      running: 'running',
      cancel_requested: 'cancel_requested',
      dead: 'dead',
    });
  });

  it('leases what the full claim leases, and writes the same rows and log, on random states', async () => {
    let decidedRuns = 0;
    let deferredRuns = 0;
    let leasedTotal = 0;
    let twoInOneWorkflow = 0;
    let withUpstream = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(workflowSpec, { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 12 }),
        fc.constantFrom('cpu', 'net'),
        async (specs, limit, queue) => {
          const busy = await store(opened().db, specs);
          const request = { queue, limit, holder };
          const { full, fast } = await whileHeld(opened().pool, busy, async () => ({
            full: await rolledBack(opened().db, async (tx) => {
              const result = await claimTasks(tx, apply, request);
              return { result, rows: await rowsAfter(tx, claimStamp(result.now)) };
            }),
            fast: await rolledBack(opened().db, async (tx) => {
              const plan = claimStatementPlan(apply, request);
              if (plan === null) throw new Error("the machine's claim should be expressible");
              const result = await taskClaimInOneStatement(tx, plan);
              return { result, rows: await rowsAfter(tx, claimStamp(result.now)) };
            }),
          }));
          const fullLeased = full.result.outcomes.flatMap((outcome) =>
            outcome.kind === 'applied' && outcome.edge.to === 'leased' ? [outcome.taskId] : [],
          );
          const fullFinalized = full.result.outcomes.some(
            (outcome) =>
              outcome.kind === 'applied' &&
              outcome.edge.reason === 'deadline_exceeded_before_start',
          );
          // The full claim cannot count skipped candidates when it locked no workflow at all
          // (its statement returns no row); the one statement always can.
          if (full.result.tasks.size > 0) expect(fast.result.skipped).toBe(full.result.skipped);
          if (!fast.result.decided) {
            deferredRuns += 1;
            // It defers only for what the machine decides otherwise, and then writes nothing.
            expect(fullFinalized).toBe(true);
            expect(fast.result.claimed).toEqual([]);
            expect(fast.rows.log).toEqual([]);
            return;
          }
          decidedRuns += 1;
          leasedTotal += fullLeased.length;
          const workflowsLeased = new Set(fast.result.claimed.map((row) => row.task.workflowId))
            .size;
          if (workflowsLeased < fast.result.claimed.length) twoInOneWorkflow += 1;
          expect(fullFinalized).toBe(false);
          expect(fast.result.claimed.map((row) => row.task.id)).toEqual(fullLeased);
          // Each leased task reads its upstream steps' outputs, as stored.
          for (const row of fast.result.claimed) {
            const definition = definitions.get(row.workflowName) as WorkflowDefinition;
            const upstream = upstreamOf(definition, row.task.step);
            const expected = Object.fromEntries(
              full.rows.tasks
                .filter((task) => task.workflow_id === row.task.workflowId)
                .filter((task) => upstream.has(task.step as string))
                .map((task) => [task.step, task.output]),
            );
            expect(row.outputs).toEqual(expected);
            if (upstream.size > 0) withUpstream += 1;
          }
          expect(fast.rows).toEqual(full.rows);
        },
      ),
      { numRuns: 300 },
    );
    console.info(
      `[claim-statement] decided ${decidedRuns} runs (${leasedTotal} leases, ${withUpstream} reading upstream outputs; ${twoInOneWorkflow} with two of one workflow), deferred ${deferredRuns}`,
    );
    // The generator must reach both branches, or the property proves less than it says.
    expect(decidedRuns).toBeGreaterThan(100);
    expect(deferredRuns).toBeGreaterThan(3);
    expect(leasedTotal).toBeGreaterThan(70);
    expect(twoInOneWorkflow).toBeGreaterThan(1);
    expect(withUpstream).toBeGreaterThan(15);
  }, 120_000);
});
