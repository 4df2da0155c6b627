import {
  awaitReceipt,
  defineWorkflow,
  step,
  type WorkflowDefinition,
  workflow,
} from '@causeway/workflow';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { isMessage, spawnFixture } from './fixtures/children';
import { crashWorkflows } from './fixtures/crash-workflows';

/**
 * R54: no engine stalls behind work it does not define. Another version's work that is due
 * first, more of it than a sweep list holds, in every category the sweeper lists (expired
 * leases, queued and waiting past the deadline, waits timed out, receipts overdue), must not
 * keep one pass of this engine's sweeper from its own due work. Real PostgreSQL; the leases
 * are held by worker processes that are SIGKILLed; database time is moved past everything.
 */
const database = useTestDatabase();
const url = () => database().url;
/** More than the sweeper's batch of 200 per list. */
const backlog = 210;
const dueMs = 60_000;
const input = z.object({ i: z.number().int() });

/** The same four kinds of due work, once for the other version and once for this one. */
function dueWorkflows(prefix: string): WorkflowDefinition[] {
  return [
    defineWorkflow({
      name: `${prefix}-deadline`,
      input,
      // A queue no worker serves: the task stays queued until its deadline.
      steps: { only: step({ queue: `${prefix}-idle`, deadlineMs: dueMs, run: () => 'ran' }) },
    }),
    workflow({ name: `${prefix}-wait-deadline`, input, deadlineMs: dueMs })
      .event('wait', {
        name: `${prefix}.never`,
        key: (ctx) => String(ctx.input.i),
        timeoutMs: 10 * dueMs,
      })
      .build(),
    workflow({ name: `${prefix}-timeout`, input })
      .event('wait', {
        name: `${prefix}.late`,
        key: (ctx) => String(ctx.input.i),
        timeoutMs: dueMs,
        onTimeout: 'gave up',
      })
      .build(),
    defineWorkflow({
      name: `${prefix}-receipt`,
      input,
      steps: {
        submit: step<{ i: number }>({
          queue: `${prefix}-receipts`,
          run: (ctx) => awaitReceipt({ receiptId: `${prefix}-${ctx.input.i}`, timeoutMs: dueMs }),
        }),
      },
    }),
  ];
}

const crashing = crashWorkflows({ reached: async () => undefined });
const crashOf = (name: string) => crashing.filter((definition) => definition.name === name);

/** Starts a worker process that claims `expected` crash workflows, hangs in them, and is killed. */
async function leaseAndKill(expected: number): Promise<void> {
  const child = spawnFixture('crash-worker.ts', {
    CAUSEWAY_CHILD_DATABASE_URL: url(),
    CAUSEWAY_CHILD_LEASE_MS: '1000',
    CAUSEWAY_CHILD_CONCURRENCY: String(backlog + 10),
  });
  await child.ready(60_000);
  await waitFor(
    () => child.messages.filter(isMessage('reached')).length === expected || undefined,
    {
      timeoutMs: 60_000,
      description: `${expected} steps leased by the worker process`,
    },
  );
  await child.kill();
}

const lastEdges = (names: readonly string[]) =>
  query<{ name: string; state: string; reason: string; n: number }>(
    url(),
    `select w.name, t.state, last.reason, count(*)::int as n
       from causeway_tasks as t join causeway_workflows as w on w.id = t.workflow_id
       cross join lateral (select reason from causeway_transitions as l
         where l.workflow_id = t.workflow_id and l.task_id = t.id order by l.id desc limit 1) as last
      where w.name = any($1::text[])
      group by w.name, t.state, last.reason order by w.name, t.state, last.reason`,
    [names],
  );

describe('the sweeper and work it does not define (R54)', () => {
  it('settles its own due work in one pass behind more than a batch of another version’s, in every list', async () => {
    const otherDue = dueWorkflows('other');
    const ownDue = dueWorkflows('own');
    const other = testEngine(url(), {
      workflows: [...otherDue, ...crashOf('crash-reentrant')],
    });
    await other.migrate();
    const own = testEngine(url(), {
      workflows: [...ownDue, ...crashOf('crash-before-boundary')],
    });
    const many = Array.from({ length: backlog }, (_, i) => ({ i }));

    // Expired leases: the other version's are older (their worker died first).
    await other.submitMany(
      many.map((value) => ({ name: 'crash-reentrant', input: { label: String(value.i) } })),
    );
    await leaseAndKill(backlog);
    await own.submit('crash-before-boundary', { label: 'own' });
    await leaseAndKill(1);

    // Deadlines, timeouts and receipts: the other version's are due first.
    for (const name of ['deadline', 'wait-deadline', 'timeout', 'receipt']) {
      await other.submitMany(many.map((value) => ({ name: `other-${name}`, input: value })));
    }
    for (const name of ['deadline', 'wait-deadline', 'timeout', 'receipt']) {
      await own.submit(`own-${name}`, { i: 0 });
    }
    for (const [engine, prefix, n] of [
      [other, 'other', backlog],
      [own, 'own', 1],
    ] as const) {
      const worker = await engine.startWorker({
        queues: [`${prefix}-receipts`],
        concurrency: 10,
        sweeper: false,
      });
      await waitFor(
        async () => {
          const rows = await query<{ n: number }>(
            url(),
            `select count(*)::int as n from causeway_tasks as t
               join causeway_workflows as w on w.id = t.workflow_id
              where w.name = $1 and t.state = 'awaiting_receipt'`,
            [`${prefix}-receipt`],
          );
          return rows[0]?.n === n;
        },
        { timeoutMs: 30_000, description: `${n} ${prefix} receipts awaited` },
      );
      await worker.stop();
    }

    await setDatabaseClockOffset(url(), 10 * dueMs);
    await own.sweep();

    // One pass settled all of this engine's due work...
    expect(await lastEdges(['crash-before-boundary', ...ownDue.map((d) => d.name)])).toEqual([
      { name: 'crash-before-boundary', state: 'queued', reason: 'lease_expired', n: 1 },
      { name: 'own-deadline', state: 'dead', reason: 'deadline_exceeded_before_start', n: 1 },
      { name: 'own-receipt', state: 'dead', reason: 'receipt_timeout', n: 1 },
      { name: 'own-timeout', state: 'succeeded', reason: 'event_timeout', n: 1 },
      { name: 'own-wait-deadline', state: 'dead', reason: 'deadline_exceeded', n: 1 },
    ]);
    // ...and left the other version's as they were, for the engine that defines them.
    expect(await lastEdges(['crash-reentrant', ...otherDue.map((d) => d.name)])).toEqual([
      { name: 'crash-reentrant', state: 'leased', reason: 'lease_acquired', n: backlog },
      { name: 'other-deadline', state: 'queued', reason: 'submitted', n: backlog },
      {
        name: 'other-receipt',
        state: 'awaiting_receipt',
        reason: 'submitted_awaiting_receipt',
        n: backlog,
      },
      { name: 'other-timeout', state: 'waiting', reason: 'submitted', n: backlog },
      { name: 'other-wait-deadline', state: 'waiting', reason: 'submitted', n: backlog },
    ]);
    // The engine that defines them settles them.
    await other.sweep();
    const settled = await query<{ n: number }>(
      url(),
      `select count(*)::int as n from causeway_tasks as t
         join causeway_workflows as w on w.id = t.workflow_id
        where (w.name like 'other-%' and t.state in ('queued', 'waiting', 'awaiting_receipt'))
           or (w.name = 'crash-reentrant' and t.state = 'leased')`,
    );
    expect(settled).toEqual([{ n: 0 }]);
    expect(await logMismatches(url())).toEqual([]);
    await setDatabaseClockOffset(url(), 0);
  }, 180_000);

  it('goes on with the due work when its look for stored events fails', async () => {
    const solo = dueWorkflows('solo');
    const engine = testEngine(url(), { workflows: solo, sweepIntervalMs: 50 });
    await engine.migrate();
    await engine.startWorker({ queues: ['solo-receipts'], concurrency: 1 });
    const timedOut = async (id: string) =>
      (await engine.getWorkflow(id))?.tasks[0]?.transitions.at(-1)?.reason === 'event_timeout' ||
      undefined;
    const first = await engine.submit('solo-timeout', { i: 1 });
    await setDatabaseClockOffset(url(), 10 * dueMs);
    // A pass went through: the next ones read the events stored since it.
    await waitFor(() => timedOut(first.workflow.id), { description: 'the first wait swept' });
    // That read now fails (here: a database without the column it reads, 0023).
    await query(url(), 'alter table causeway_events drop column xact');
    const second = await engine.submit('solo-timeout', { i: 2 });
    await setDatabaseClockOffset(url(), 20 * dueMs);
    await waitFor(() => timedOut(second.workflow.id), {
      timeoutMs: 10_000,
      description: 'the second wait swept though the look for stored events fails',
    });
    await setDatabaseClockOffset(url(), 0);
  });
});
