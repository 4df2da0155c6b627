/**
 * The one-statement settle of `complete` results (`settleInOneStatement` → `taskSettleInOneStatement`,
 * the rest then decided in full, as the worker's resultWriter does) against
 * the machine's full decision (`applyEvents`): on random stored states reached by driving the
 * pure machine, a random batch of results (current leases, stale epochs, expired or foreign
 * leases, tasks in any state, two results for one workflow, failures among completions) is
 * written both ways in
 * rolled-back transactions over the same rows. Outcomes, task and workflow rows and log rows
 * must be the same; what the statement does not decide goes to the full decision. The worker's
 * variant (`writeResultsInOneStatement`, edges without task rows) must write the same rows and
 * answer the same edges. With slots for chained steps (random per queue), the statement also
 * leases steps its results make ready; the full decision's counterpart is the same results
 * followed by claims of exactly those steps, and the rows must again be the same.
 *
 * Shared with production on purpose: this is a differential test, and its oracle is the
 * engine's own full decision (`applyEvents`), which the engine model test checks against the
 * pure machine (and the machine against its own independent model). The rows compared are
 * read with plain SQL (`rowsAfter`), and what a chained step is handed is checked against
 * those rows and the test's own upstream oracle (`upstreamOf`), not against the fast path.
 */
import fc from 'fast-check';
import { sql, type Transaction } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { CausewayDatabase } from '../../packages/engine/src/db/schema';
import { applyEvents } from '../../packages/engine/src/runtime/decision/apply-events';
import type { EventRequest } from '../../packages/engine/src/runtime/decision/event-request';
import {
  type ChainCapacity,
  type SettledBatch,
  settleInOneStatement,
  writeResultsInOneStatement,
} from '../../packages/engine/src/runtime/settle/one-statement-settle';
import {
  definitions,
  holder,
  plainOutcome,
  rolledBack,
  rowsAfter,
  settleStamp,
  store,
  upstreamOf,
  useStoredRunsDatabase,
  workerResult,
  workflowSpec,
} from './stored-runs';

const opened = useStoredRunsDatabase();
const apply = { definitions, leaseMs: 30_000, random: () => 0.5 };

/**
 * The resultWriter's composition in one transaction: what one statement writes, then the rest
 * decided in full; outcomes in request order, with how many the one statement wrote.
 */
async function inOneStatementThenInFull(
  tx: Transaction<CausewayDatabase>,
  requests: readonly EventRequest[],
  capacity: ChainCapacity,
  write: (
    tx: Transaction<CausewayDatabase>,
    context: typeof apply,
    requests: readonly EventRequest[],
    capacity: ChainCapacity,
  ) => Promise<SettledBatch<unknown>>,
) {
  const { decided, chained } = await write(tx, apply, requests, capacity);
  const rest = requests.filter((request) => !decided.has(request));
  const full = rest.length === 0 ? [] : (await applyEvents(tx, apply, rest)).outcomes;
  return {
    outcomes: requests.map((request) => decided.get(request) ?? full[rest.indexOf(request)]),
    inOneStatement: decided.size,
    chained,
  };
}

/** What an attempt of a chained step is given, for comparison with the full decision's rows. */
const chainedView = (chained: SettledBatch<unknown>['chained']) =>
  chained.map((claimed) => ({
    id: claimed.task.id,
    queue: claimed.task.queue,
    state: claimed.task.state,
    attempt: claimed.task.attempt,
    leaseEpoch: claimed.task.leaseEpoch,
    deadlineAt: claimed.task.deadlineAt === null ? null : settleStamp(claimed.task.deadlineAt),
    input: claimed.input,
    results: claimed.results,
  }));

const resultSpec = fc.record({
  pick: fc.nat(),
  /** Mostly a completed step; sometimes a failed one (decided in full, in the same batch). */
  fails: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
  /** Mostly the stored epoch; sometimes a stale one (a lease lost and taken again). */
  staleEpoch: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
  /** Sometimes another task of the previous result's workflow (the batch rule's case). */
  sibling: fc.integer({ min: 0, max: 2 }).map((n) => n === 0),
});

/** Slots for chained steps per queue: sometimes none (the plain settle), else a few. */
const capacitySpec = fc.oneof(
  { arbitrary: fc.constant(new Map<string, number>()), weight: 1 },
  {
    arbitrary: fc
      .record({ cpu: fc.integer({ min: 0, max: 2 }), net: fc.integer({ min: 0, max: 2 }) })
      .map((slots): ChainCapacity => new Map(Object.entries(slots))),
    weight: 3,
  },
);

describe('the one-statement settle', () => {
  it('writes what the full decision writes, on random states and batches of results', async () => {
    let inOneStatement = 0;
    let fellBack = 0;
    let promotions = 0;
    let parentChanges = 0;
    let sharedWorkflow = 0;
    let chainedSteps = 0;
    let unchainedPromotions = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(workflowSpec, { minLength: 1, maxLength: 8 }),
        fc.array(resultSpec, { minLength: 1, maxLength: 6 }),
        capacitySpec,
        async (specs, results, capacity) => {
          await store(opened().db, specs);
          const { rows: tasks } = await sql<{
            id: string;
            workflow_id: string;
            lease_epoch: string;
            state: string;
            step: string;
            name: string;
          }>`select t.id, t.workflow_id, t.lease_epoch, t.state, t.step, w.name
               from causeway_tasks as t join causeway_workflows as w on w.id = t.workflow_id
              order by t.id`.execute(opened().db);
          // Mostly tasks that hold a lease, so most results are ones a worker would send.
          const holding = tasks.filter((task) =>
            ['leased', 'cancel_requested'].includes(task.state),
          );
          const requests: EventRequest[] = [];
          for (const [index, result] of results.entries()) {
            const pool = holding.length > 0 && index % 4 !== 3 ? holding : tasks;
            // Sometimes another task of the previous result's workflow: two results for one
            // workflow in a batch, which the one statement leaves to the full decision.
            const previous = requests.at(-1);
            const siblings =
              result.sibling && previous !== undefined
                ? tasks.filter(
                    (task) =>
                      task.workflow_id === previous.workflowId && task.id !== previous.taskId,
                  )
                : [];
            const from = siblings.length > 0 ? siblings : pool;
            const task = from[result.pick % from.length];
            // A worker sends one result per task; two tasks of one workflow may both report.
            if (task === undefined || requests.some((request) => request.taskId === task.id)) {
              continue;
            }
            requests.push(workerResult(task, task, { ...result, output: { result: index } }));
          }
          const fast = await rolledBack(opened().db, async (tx) => {
            const settled = await inOneStatementThenInFull(
              tx,
              requests,
              capacity,
              settleInOneStatement,
            );
            return { ...settled, rows: await rowsAfter(tx, settleStamp) };
          });
          // The full decision: the same results, then claims of exactly the chained steps.
          const claims: EventRequest[] = fast.chained.map((claimed) => ({
            taskId: claimed.task.id,
            workflowId: claimed.task.workflowId,
            event: { type: 'claim', actor: { kind: 'worker', name: holder } },
          }));
          const full = await rolledBack(opened().db, async (tx) => {
            const applied = await applyEvents(tx, apply, [...requests, ...claims], { holder });
            return { outcomes: applied.outcomes, rows: await rowsAfter(tx, settleStamp) };
          });
          expect(plainOutcome(fast.outcomes)).toEqual(
            plainOutcome(full.outcomes.slice(0, requests.length)),
          );
          for (const outcome of full.outcomes.slice(requests.length)) {
            expect(outcome).toMatchObject({ kind: 'applied', edge: { to: 'leased' } });
          }
          // Never more chained steps per queue than the slots given.
          for (const [queue, slots] of capacity) {
            const taken = fast.chained.filter((claimed) => claimed.task.queue === queue).length;
            expect(taken).toBeLessThanOrEqual(slots);
          }
          // An attempt of a chained step gets its row as the full decision leaves it, its
          // workflow's input and every upstream step's output.
          const taskOf = new Map(full.rows.tasks.map((row) => [row.id, row]));
          expect(chainedView(fast.chained)).toEqual(
            fast.chained.map((claimed) => {
              const row = taskOf.get(claimed.task.id) as Record<string, unknown>;
              // Every upstream step, direct or not (each succeeded, or this step would not run).
              const upstream = upstreamOf(claimed.definition, claimed.task.step);
              return {
                id: row.id,
                queue: row.queue,
                state: row.state,
                attempt: row.attempt,
                leaseEpoch: Number(row.lease_epoch),
                deadlineAt: row.deadline_at,
                input: { n: 1 },
                results: Object.fromEntries(
                  [...upstream].map((step) => [
                    step,
                    full.rows.tasks.find(
                      (task) => task.workflow_id === row.workflow_id && task.step === step,
                    )?.output,
                  ]),
                ),
              };
            }),
          );
          for (const claimed of fast.chained) {
            const upstream = claimed.definition.steps.filter((step) =>
              claimed.step.after.includes(step.name),
            );
            // Direct upstream steps all succeeded, so each has an output to hand over.
            for (const step of upstream) expect(claimed.results).toHaveProperty(step.name);
          }
          // Each workflow's log in the same order; across workflows a batch may interleave
          // differently (the one statement writes its results before the full decision's).
          const byWorkflow = (rows: typeof full.rows) => ({
            ...rows,
            log: [...rows.log].sort((a, b) =>
              String(a.workflow_id).localeCompare(String(b.workflow_id)),
            ),
          });
          expect(plainOutcome(byWorkflow(fast.rows))).toEqual(plainOutcome(byWorkflow(full.rows)));
          // The resultWriter's way: the statement answering edges only, then the rest in full.
          const worker = await rolledBack(opened().db, async (tx) => {
            const settled = await inOneStatementThenInFull(
              tx,
              requests,
              capacity,
              writeResultsInOneStatement,
            );
            return { ...settled, rows: await rowsAfter(tx, settleStamp) };
          });
          const edgeOf = (outcome: unknown) =>
            plainOutcome((outcome as { kind: string; edge?: unknown }).edge ?? outcome);
          expect(worker.outcomes.map(edgeOf)).toEqual(fast.outcomes.map(edgeOf));
          expect(plainOutcome(worker.rows)).toEqual(plainOutcome(fast.rows));
          expect(chainedView(worker.chained)).toEqual(chainedView(fast.chained));
          // A completion that holds its lease, in a batch with another result for its workflow.
          const sharing = requests.filter(
            (request) =>
              request.event.type === 'complete' &&
              holding.some(
                (task) =>
                  task.id === request.taskId && Number(task.lease_epoch) === request.fence?.epoch,
              ) &&
              requests.some(
                (other) => other !== request && other.workflowId === request.workflowId,
              ),
          );
          if (sharing.length > 0) sharedWorkflow += 1;
          inOneStatement += fast.inOneStatement;
          fellBack += requests.length - fast.inOneStatement;
          promotions += fast.rows.log.filter((row) => row.reason === 'upstream_succeeded').length;
          chainedSteps += fast.chained.length;
          unchainedPromotions += fast.rows.tasks.filter(
            (row) =>
              row.state === 'queued' &&
              fast.rows.log.some(
                (log) => log.task_id === row.id && log.reason === 'upstream_succeeded',
              ),
          ).length;
          parentChanges += fast.rows.log.filter(
            (row) => row.task_id === null && row.reason === 'completed',
          ).length;
        },
      ),
      { numRuns: 500 },
    );
    console.info(
      `[settle-statement] ${inOneStatement} results in one statement, ${fellBack} decided in full; ${promotions} promotions (${chainedSteps} chained, ${unchainedPromotions} left queued), ${parentChanges} parent changes, ${sharedWorkflow} batches where a holding completion shares its workflow`,
    );
    // The generator must reach every branch, or the property proves less than it says.
    expect(inOneStatement).toBeGreaterThan(25);
    expect(fellBack).toBeGreaterThan(50);
    expect(promotions).toBeGreaterThan(20);
    expect(parentChanges).toBeGreaterThan(8);
    expect(sharedWorkflow).toBeGreaterThan(25);
    expect(chainedSteps).toBeGreaterThan(5);
    expect(unchainedPromotions).toBeGreaterThan(10);
  }, 180_000);
});
