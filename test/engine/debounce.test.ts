/**
 * R52 debounce: bursts of one key leave one survivor and a `superseded` record of each other
 * workflow; keys do not meet; a failing key function writes nothing; a debounce racing a
 * worker's claim either supersedes the workflow (the claim takes nothing) or finds it started.
 */
import type { SubmitResult } from '@causeway/engine';
import { defineWorkflow, step } from '@causeway/workflow/internal';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createTestDatabase, type TestDatabase } from '../helpers/database';
import { logMismatches, query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';

/** A database of each test's own: the log is append-only, so tests cannot share one. */
const databases: TestDatabase[] = [];
afterAll(async () => {
  await Promise.all(databases.map((database) => database.drop()));
});
const rounds = Number(process.env.CAUSEWAY_RACE_ROUNDS ?? 100);

const noteInput = z.object({ noteId: z.string(), version: z.number().int() });

/** Two steps, so that a superseded workflow ends a queued task and a pending one. */
function publishNote(quietMs: number, maxWaitMs?: number) {
  return defineWorkflow({
    name: 'publish-note',
    input: noteInput,
    debounce: {
      key: (input) => {
        if (input.noteId === 'boom') throw new Error('no key for boom');
        return `note:${input.noteId}`;
      },
      quietMs,
      ...(maxWaitMs === undefined ? {} : { maxWaitMs }),
    },
    steps: {
      render: step({ run: () => ({ rendered: true }) }),
      publish: step({ after: ['render'], run: () => ({ published: true }) }),
    },
  });
}

interface SupersededRow extends Record<string, unknown> {
  workflow_id: string;
  task_id: string;
  from_state: string;
  actor: string;
  by: string;
}

async function supersededEdges(url: string): Promise<SupersededRow[]> {
  return query<SupersededRow>(
    url,
    `select workflow_id, task_id, from_state, actor, detail->>'supersededBy' as by
       from causeway_transitions where reason = 'superseded' and task_id is not null`,
  );
}

/** Each workflow's `submitted` log position: the order the key's lock admitted them in. */
async function submittedOrder(url: string): Promise<Map<string, number>> {
  const rows = await query<{ workflow_id: string; first: string }>(
    url,
    `select workflow_id, min(id)::text as first from causeway_transitions
      where reason = 'submitted' group by workflow_id`,
  );
  return new Map(rows.map((row) => [row.workflow_id, Number(row.first)]));
}

/** An engine on a database of the test's own, migrated. */
async function freshEngine(
  quietMs: number,
  maxWaitMs?: number,
  poolSize = 8,
): Promise<{ url: string; engine: ReturnType<typeof testEngine> }> {
  const database = await createTestDatabase();
  databases.push(database);
  const { url } = database;
  const engine = testEngine(url, { workflows: [publishNote(quietMs, maxWaitMs)], poolSize });
  await engine.migrate();
  return { url, engine };
}

describe('debounce (R52)', () => {
  it('a burst of 100 racing submits of one key leaves one survivor and 99 superseded, each naming a later workflow', async () => {
    const { url, engine } = await freshEngine(60_000, 120_000, 8);
    const answers: SubmitResult[] = await Promise.all(
      Array.from({ length: 100 }, (_, version) =>
        engine.submit('publish-note', { noteId: 'n1', version }),
      ),
    );
    const workflows = await query<{ id: string; state: string }>(
      url,
      `select id, state from causeway_workflows`,
    );
    expect(workflows).toHaveLength(100);
    const survivors = workflows.filter((workflow) => workflow.state !== 'cancelled');
    expect(survivors).toHaveLength(1);
    const survivor = survivors[0]?.id as string;

    const edges = await supersededEdges(url);
    // Two tasks per superseded workflow: the queued first step and the pending second one.
    expect(edges).toHaveLength(99 * 2);
    expect(new Set(edges.map((edge) => edge.from_state))).toEqual(new Set(['queued', 'pending']));
    expect(new Set(edges.map((edge) => edge.actor))).toEqual(new Set(['client']));
    const byOf = new Map<string, string>();
    for (const edge of edges) {
      expect(byOf.get(edge.workflow_id) ?? edge.by).toBe(edge.by);
      byOf.set(edge.workflow_id, edge.by);
    }
    expect(byOf.size).toBe(99);
    expect(byOf.has(survivor)).toBe(false);
    const order = await submittedOrder(url);
    for (const [old, by] of byOf) {
      expect(order.get(by) as number).toBeGreaterThan(order.get(old) as number);
    }
    // The answers name what each superseded; together they name all 99, once each.
    const named = answers.flatMap((answer) => answer.debounce?.superseded ?? []);
    expect(named.sort()).toEqual([...byOf.keys()].sort());
    for (const answer of answers) {
      for (const old of answer.debounce?.superseded ?? []) {
        expect(byOf.get(old)).toBe(answer.workflow.id);
      }
    }

    // Due `quietMs` after its own submit, within `maxWaitMs` of the burst's first, by
    // database time; the burst's start is the first workflow's.
    const [due] = await query<{
      run_at: Date;
      submitted_at: Date;
      burst: Date;
      first_burst: Date;
      quiet: number;
      max_wait: number;
    }>(
      url,
      `select t.run_at, w.created_at as submitted_at, w.debounce_burst_started_at as burst,
              (select min(debounce_burst_started_at) from causeway_workflows) as first_burst,
              w.debounce_quiet_ms as quiet, w.debounce_max_wait_ms as max_wait
         from causeway_tasks t join causeway_workflows w on w.id = t.workflow_id
        where w.id = $1 and t.step = 'render'`,
      [survivor],
    );
    expect(due).toBeDefined();
    if (due === undefined) return;
    expect(due.burst.getTime()).toBe(due.first_burst.getTime());
    expect([due.quiet, due.max_wait]).toEqual([60_000, 120_000]);
    expect(due.run_at.getTime()).toBeLessThanOrEqual(due.burst.getTime() + 120_000);
    expect(Math.abs(due.run_at.getTime() - (due.submitted_at.getTime() + 60_000))).toBeLessThan(
      1_000,
    );
    const survivorAnswer = answers.find((answer) => answer.workflow.id === survivor);
    expect(survivorAnswer?.debounce?.dueAt.getTime()).toBe(due.run_at.getTime());
    expect(await logMismatches(url)).toEqual([]);
  });

  it('maxWaitMs from the first submit of the burst bounds the survivor, carried across superseded workflows', async () => {
    const { url, engine } = await freshEngine(8_000, 10_000);
    const first = await engine.submit('publish-note', { noteId: 'n1', version: 1 });
    const [start] = await query<{ burst: Date }>(
      url,
      'select debounce_burst_started_at as burst from causeway_workflows where id = $1',
      [first.workflow.id],
    );
    await setDatabaseClockOffset(url, 3_000);
    const second = await engine.submit('publish-note', { noteId: 'n1', version: 2 });
    await setDatabaseClockOffset(url, 6_000);
    const third = await engine.submit('publish-note', { noteId: 'n1', version: 3 });
    expect(second.debounce?.superseded).toEqual([first.workflow.id]);
    expect(third.debounce?.superseded).toEqual([second.workflow.id]);
    const burst = (start as { burst: Date }).burst.getTime();
    // 6 s + 8 s of quiet is past 10 s from the burst's start: the max wait decides.
    expect(third.debounce?.dueAt.getTime()).toBe(burst + 10_000);
    const [row] = await query<{ run_at: Date; burst: Date }>(
      url,
      `select t.run_at, w.debounce_burst_started_at as burst from causeway_tasks t
         join causeway_workflows w on w.id = t.workflow_id where w.id = $1 and t.step = 'render'`,
      [third.workflow.id],
    );
    expect(row?.run_at.getTime()).toBe(burst + 10_000);
    expect(row?.burst.getTime()).toBe(burst);
  });

  it('keys do not meet: each key keeps its own survivor', async () => {
    const { url, engine } = await freshEngine(60_000, undefined, 6);
    const notes = ['a', 'b', 'c'];
    await Promise.all(
      Array.from({ length: 30 }, (_, index) =>
        engine.submit('publish-note', { noteId: notes[index % 3] as string, version: index }),
      ),
    );
    const rows = await query<{ note: string; live: number; cancelled: number }>(
      url,
      `select input->>'noteId' as note,
              count(*) filter (where state <> 'cancelled')::int as live,
              count(*) filter (where state = 'cancelled')::int as cancelled
         from causeway_workflows group by 1 order by 1`,
    );
    expect(rows).toEqual(notes.map((note) => ({ note, live: 1, cancelled: 9 })));
    const crossed = await query(
      url,
      `select 1 from causeway_transitions t
         join causeway_workflows old on old.id = t.workflow_id
         join causeway_workflows new on new.id = (t.detail->>'supersededBy')::uuid
        where t.reason = 'superseded' and old.debounce_key is distinct from new.debounce_key`,
    );
    expect(crossed).toEqual([]);
  });

  it('a later request of a key in one submitMany supersedes the earlier one in the same transaction', async () => {
    const { url, engine } = await freshEngine(60_000);
    const answers = await engine.submitMany([
      { name: 'publish-note', input: { noteId: 'n1', version: 1 } },
      { name: 'publish-note', input: { noteId: 'n2', version: 1 } },
      { name: 'publish-note', input: { noteId: 'n1', version: 2 } },
    ]);
    const [first, other, last] = answers as [SubmitResult, SubmitResult, SubmitResult];
    expect(first.workflow.state).toBe('cancelled');
    expect(first.debounce?.superseded).toEqual([]);
    expect(other.debounce?.superseded).toEqual([]);
    expect(last.debounce?.superseded).toEqual([first.workflow.id]);
    const states = await query<{ id: string; state: string }>(
      url,
      'select id, state from causeway_workflows order by id',
    );
    expect(new Map(states.map((row) => [row.id, row.state]))).toEqual(
      new Map([
        [first.workflow.id, 'cancelled'],
        [other.workflow.id, 'queued'],
        [last.workflow.id, 'queued'],
      ]),
    );
  });

  it('a key function that throws refuses the submit with invalid_debounce_key and writes nothing', async () => {
    const { url, engine } = await freshEngine(60_000);
    await engine.submit('publish-note', { noteId: 'n1', version: 1 });
    const refused = await engine
      .submitMany([
        { name: 'publish-note', input: { noteId: 'n1', version: 2 } },
        { name: 'publish-note', input: { noteId: 'boom', version: 3 } },
      ])
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'invalid_debounce_key' });
    expect((refused as Error).message).toContain('no key for boom');
    const rows = await query<{ count: number }>(
      url,
      `select (select count(*) from causeway_workflows)::int
            + (select count(*) from causeway_transitions where reason = 'superseded')::int as count`,
    );
    // The first workflow only: the batch's other request did not supersede it.
    expect(rows[0]?.count).toBe(1);
  });

  it(
    `${rounds} rounds of a debounce racing a worker's claim: superseded or started, never both, never neither`,
    async () => {
      const { url, engine } = await freshEngine(20, undefined, 8);
      const worker = await engine.startWorker({ concurrency: 4 });
      const outcomes = { superseded: 0, started: 0 };
      try {
        for (let round = 0; round < rounds; round += 1) {
          const noteId = `race-${round}`;
          const first = await engine.submit('publish-note', { noteId, version: 1 });
          // From right away to past the worker's poll after the first's due time (20 ms), so
          // that some of the second submits meet the worker's claim of the first.
          await new Promise((resolve) => setTimeout(resolve, (round % 25) * 10));
          const second = await engine.submit('publish-note', { noteId, version: 2 });
          const superseded = second.debounce?.superseded ?? [];
          const leases = await query<{ count: number }>(
            url,
            `select count(*)::int as count from causeway_transitions
            where workflow_id = $1 and reason = 'lease_acquired'`,
            [first.workflow.id],
          );
          const leased = (leases[0]?.count ?? 0) > 0;
          if (superseded.includes(first.workflow.id)) {
            outcomes.superseded += 1;
            expect(superseded).toEqual([first.workflow.id]);
            // The supersede won: the claim took nothing of it, before or after.
            expect(leased).toBe(false);
          } else {
            outcomes.started += 1;
            expect(superseded).toEqual([]);
            // The claim won: the first had started when the second looked.
            expect(leased).toBe(true);
          }
        }
        await waitFor(
          async () => {
            const open = await query(
              url,
              `select 1 from causeway_workflows where state not in ('succeeded', 'cancelled')`,
            );
            return open.length === 0;
          },
          { timeoutMs: 60_000 },
        );
      } finally {
        await worker.stop();
      }
      // Never both: no workflow was superseded and also leased, at any time.
      const both = await query(
        url,
        `select workflow_id from causeway_transitions group by workflow_id
       having bool_or(reason = 'superseded') and bool_or(reason = 'lease_acquired')`,
      );
      expect(both).toEqual([]);
      const states = await query<{ state: string; count: number }>(
        url,
        `select state, count(*)::int as count from causeway_workflows group by 1 order by 1`,
      );
      expect(states).toEqual(
        [
          { state: 'cancelled', count: outcomes.superseded },
          { state: 'succeeded', count: rounds * 2 - outcomes.superseded },
        ].filter((row) => row.count > 0),
      );
      expect(await logMismatches(url)).toEqual([]);
      // The rounds only prove something if both sides of the race won some.
      if (rounds >= 50) expect(Math.min(outcomes.superseded, outcomes.started)).toBeGreaterThan(0);
      console.info(
        `[debounce race] ${rounds} rounds: ${outcomes.superseded} superseded, ${outcomes.started} started first`,
      );
    },
    60_000 + rounds * 500,
  );
});
