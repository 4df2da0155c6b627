import { type Engine, EngineError } from '@causeway/engine';
import { createWorkflowRun, defineWorkflow, step } from '@causeway/workflow/internal';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { publishNote } from '../../examples/publish-note/workflow';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { expectLogIsSound, gate, tableCounts } from './semantics-support';

/**
 * Admission (R2, R6, R30, R34, seed 002): idempotent and transactional submits, batch
 * submits, per-queue admission caps, and the catalogue of bad input. A refused submit writes
 * nothing and disturbs nothing accepted earlier.
 */
const database = useTestDatabase();
const url = () => database().url;

const simple = defineWorkflow({
  name: 'adm-simple',
  input: z.object({ label: z.string() }),
  steps: { only: step({ queue: 'q-adm', run: () => 'ok' }) },
});

const strict = defineWorkflow({
  name: 'adm-strict',
  input: z.object({
    name: z.string().min(1),
    count: z.number().int(),
    blob: z.string().optional(),
    tags: z.array(z.string()).optional(),
    meta: z.record(z.string(), z.string()).optional(),
  }),
  steps: { only: step({ queue: 'q-strict', run: () => 'ok' }) },
});

/** Its key function returns the input's `k`, so an empty `k` is an empty key. */
const keyed = defineWorkflow({
  name: 'adm-keyed',
  input: z.object({ k: z.string() }),
  idempotencyKey: (input) => input.k,
  steps: { only: step({ queue: 'q-strict', run: () => 'ok' }) },
});

/** A root on the capped queue and a downstream step (pending work is not backlog). */
const capped = defineWorkflow({
  name: 'adm-capped',
  input: z.object({ label: z.string() }),
  steps: {
    first: step({ queue: 'q-capped', run: () => 'first' }),
    second: step({ queue: 'q-capped', after: ['first'], run: () => 'second' }),
  },
});

/** Deadlines (R28, R29) and per-step attempts, so a batch's task rows differ by step. */
const timed = defineWorkflow({
  name: 'adm-timed',
  input: z.object({ label: z.string() }),
  deadlineMs: 3_600_000,
  steps: {
    early: step({ queue: 'q-timed', deadlineMs: 60_000, maxAttempts: 2, run: () => 'early' }),
    late: step({ queue: 'q-adm', after: ['early'], maxAttempts: 7, run: () => 'late' }),
  },
});

const workflows = [simple, strict, keyed, capped, publishNote, timed];

function engine(): Engine {
  return testEngine(url(), { workflows, queues: { 'q-capped': { maxBacklog: 5 } } });
}

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

async function workflowCountByKey(name: string, key: string): Promise<number> {
  const rows = await query<{ n: number }>(
    url(),
    'select count(*)::int as n from causeway_workflows where name = $1 and idempotency_key = $2',
    [name, key],
  );
  return rows[0]?.n ?? -1;
}

/** The rejection of `promise`, which must be an EngineError. */
async function engineError(promise: Promise<unknown>): Promise<EngineError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(EngineError);
  return error as EngineError;
}

describe('idempotent submit (R2)', () => {
  it('20 parallel submits with one key make one workflow; exactly one is not deduplicated', async () => {
    // Two engines (two pools) so the submits really race in separate transactions.
    const engines = [engine(), engine()];
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        (engines[index % 2] as Engine).submit(
          'adm-simple',
          { label: `racer-${index}` },
          { idempotencyKey: 'one-key' },
        ),
      ),
    );
    const ids = new Set(results.map((result) => result.workflow.id));
    expect(ids.size).toBe(1);
    expect(results.filter((result) => !result.deduplicated)).toHaveLength(1);
    expect(await workflowCountByKey('adm-simple', 'one-key')).toBe(1);
    const [id] = [...ids];
    const rows = await query<{ tasks: number; transitions: number }>(
      url(),
      `select (select count(*)::int from causeway_tasks where workflow_id = $1) as tasks,
              (select count(*)::int from causeway_transitions where workflow_id = $1) as transitions`,
      [id],
    );
    // One task and two rows (the workflow's and the task's `submitted`): nothing doubled.
    expect(rows[0]).toEqual({ tasks: 1, transitions: 2 });
    // The stored input is the winner's, parsed once and never changed by the repeats.
    const winner = results.findIndex((result) => !result.deduplicated);
    const view = await engines[0]?.getWorkflow(id as string);
    expect(view?.input).toEqual({ label: `racer-${winner}` });
  });

  it("the definition's key function: same note id and version is one workflow", async () => {
    const cw = engine();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        cw.submit('publish-note', { noteId: 'n-par', version: 3, title: `take ${index}` }),
      ),
    );
    expect(new Set(results.map((result) => result.workflow.id)).size).toBe(1);
    expect(results.filter((result) => !result.deduplicated)).toHaveLength(1);
    expect(await workflowCountByKey('publish-note', 'note:n-par:publish:v3')).toBe(1);

    const again = await cw.submit('publish-note', { noteId: 'n-par', version: 3 });
    expect(again).toEqual({ workflow: results[0]?.workflow, deduplicated: true });
    const nextVersion = await cw.submit('publish-note', { noteId: 'n-par', version: 4 });
    expect(nextVersion.deduplicated).toBe(false);
    expect(nextVersion.workflow.id).not.toBe(again.workflow.id);
    // The caller's explicit key wins over the definition's function.
    const explicit = await cw.submit(
      'publish-note',
      { noteId: 'n-par', version: 3 },
      { idempotencyKey: 'caller-key' },
    );
    expect(explicit.deduplicated).toBe(false);
    expect(await workflowCountByKey('publish-note', 'caller-key')).toBe(1);
    // Keys are per workflow name: the same key on another workflow is another workflow.
    const other = await cw.submit(
      'adm-simple',
      { label: 'same key' },
      { idempotencyKey: 'caller-key' },
    );
    expect(other.deduplicated).toBe(false);
    expect(other.workflow.id).not.toBe(explicit.workflow.id);
  });
});

describe('transactional submit', () => {
  it("rolls back with the caller's transaction (engine.db): nothing is written", async () => {
    const cw = engine();
    const before = await tableCounts(url());
    let seenInside = 0;
    await expect(
      cw.db.transaction().execute(async (tx) => {
        const result = await cw.submit('adm-simple', { label: 'rolled-back' }, { transaction: tx });
        seenInside = (
          await tx
            .selectFrom('causeway_workflows')
            .select('id')
            .where('id', '=', result.workflow.id)
            .execute()
        ).length;
        // Invisible to everyone else until the caller commits.
        expect(await tableCounts(url())).toEqual(before);
        throw new Error('the caller changed its mind');
      }),
    ).rejects.toThrow('the caller changed its mind');
    expect(seenInside).toBe(1);
    expect(await tableCounts(url())).toEqual(before);
  });

  it("commits with the caller's own Kysely instance, together with the caller's rows", async () => {
    const cw = engine();
    const pool = new pg.Pool({ connectionString: url(), max: 2 });
    // biome-ignore lint/suspicious/noExplicitAny: the caller's own schema, untyped here.
    const callerDb = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
    try {
      await sql`create table if not exists caller_notes (id text primary key, workflow_id uuid)`.execute(
        callerDb,
      );
      const before = await tableCounts(url());

      // Rollback: neither the caller's row nor the workflow exists.
      await expect(
        callerDb.transaction().execute(async (tx) => {
          const result = await cw.submit('adm-simple', { label: 'caller-rb' }, { transaction: tx });
          await tx
            .insertInto('caller_notes')
            .values({ id: 'rb', workflow_id: result.workflow.id })
            .execute();
          throw new Error('rollback');
        }),
      ).rejects.toThrow('rollback');
      expect(await tableCounts(url())).toEqual(before);
      expect(await query(url(), `select * from caller_notes where id = 'rb'`)).toEqual([]);

      // Commit: both are there, and a worker runs the workflow.
      const accepted = await callerDb.transaction().execute(async (tx) => {
        const result = await cw.submit('adm-simple', { label: 'caller-ok' }, { transaction: tx });
        await tx
          .insertInto('caller_notes')
          .values({ id: 'ok', workflow_id: result.workflow.id })
          .execute();
        return result;
      });
      expect(accepted).toMatchObject({ workflow: { state: 'queued' }, deduplicated: false });
      expect(await query(url(), `select workflow_id from caller_notes where id = 'ok'`)).toEqual([
        { workflow_id: accepted.workflow.id },
      ]);
      expect(await tableCounts(url())).toEqual({
        workflows: before.workflows + 1,
        tasks: before.tasks + 1,
        transitions: before.transitions + 2,
      });
      const worker = await cw.startWorker({ queues: ['q-adm'], concurrency: 2 });
      await waitFor(
        async () => (await cw.getWorkflow(accepted.workflow.id))?.state === 'succeeded',
      );
      await worker.stop();
    } finally {
      await callerDb.destroy();
    }
  });

  it('submitMany admits a batch in one call', async () => {
    const cw = engine();
    const before = await tableCounts(url());
    const results = await cw.submitMany([
      ...Array.from({ length: 25 }, (_, index) => ({
        name: 'adm-simple',
        input: { label: `batch-${index}` },
      })),
      { name: 'publish-note', input: { noteId: 'batch', version: 1 } },
      // The same key twice in one batch is one workflow.
      { name: 'adm-simple', input: { label: 'twin-a' }, idempotencyKey: 'batch-twin' },
      { name: 'adm-simple', input: { label: 'twin-b' }, idempotencyKey: 'batch-twin' },
    ]);
    expect(results).toHaveLength(28);
    expect(new Set(results.map((result) => result.workflow.id)).size).toBe(27);
    expect(results.slice(0, 27).every((result) => !result.deduplicated)).toBe(true);
    expect(results[27]).toEqual({ workflow: results[26]?.workflow, deduplicated: true });
    expect(await tableCounts(url())).toEqual({
      workflows: before.workflows + 27,
      // 26 one-step workflows and publish-note's three steps.
      tasks: before.tasks + 26 + 3,
      transitions: before.transitions + 27 + 26 + 3,
    });
  });

  it.each([
    [3, { name: 'adm-simple', input: { label: 42 } }, 'invalid_input'],
    [2, { name: 'adm-nope', input: {} }, 'unknown_workflow'],
    [
      4,
      { name: 'adm-simple', input: { label: 'x' }, idempotencyKey: '' },
      'invalid_idempotency_key',
    ],
  ] as const)(
    'a batch with one bad request (index %i) writes nothing',
    async (index, bad, code) => {
      const cw = engine();
      const before = await tableCounts(url());
      const requests = Array.from({ length: 6 }, (_, position) =>
        position === index
          ? bad
          : { name: 'adm-simple', input: { label: `good-${index}-${position}` } },
      );
      const error = await engineError(cw.submitMany(requests));
      expect(error.code).toBe(code);
      expect(error.details).toMatchObject({ index });
      expect(error.message).toContain(`(request ${index})`);
      expect(await tableCounts(url())).toEqual(before);
    },
  );
});

describe('a batch is written as the pure machine plans it', () => {
  it('every task and log row of a batch mixing definitions, keys and a stored key', async () => {
    const cw = engine();
    const stored = await cw.submit('adm-keyed', { k: 'rows-stored' });
    const requests = [
      { name: 'adm-simple', input: { label: 'rows-1' } },
      { name: 'publish-note', input: { noteId: 'rows', version: 1 } },
      { name: 'adm-keyed', input: { k: 'rows-stored' } },
      { name: 'adm-simple', input: { label: 'rows-2' } },
      { name: 'adm-keyed', input: { k: 'rows-new' } },
      { name: 'publish-note', input: { noteId: 'rows', version: 2 } },
      { name: 'adm-timed', input: { label: 'rows-4' } },
      // Quotes, backslashes, a comma, braces and characters beyond ASCII travel unchanged.
      { name: 'adm-simple', input: { label: 'rows-3 "q", \\ {x} é 🚀' } },
      { name: 'adm-timed', input: { label: 'rows-5' } },
    ];
    const before = await tableCounts(url());
    const results = await cw.submitMany(requests);
    expect(results[2]).toEqual({ workflow: stored.workflow, deduplicated: true });
    const created = results.filter((result) => !result.deduplicated);
    expect(created).toHaveLength(8);
    const definitions = new Map(workflows.map((definition) => [definition.name, definition]));
    let tasks = 0;
    let transitions = 0;
    for (const [index, result] of results.entries()) {
      if (result.deduplicated) continue;
      const definition = definitions.get(requests[index]?.name as string);
      if (definition === undefined) throw new Error('unknown definition');
      const [workflow] = await query<{ name: string; state: string; input: unknown }>(
        url(),
        'select name, state, input from causeway_workflows where id = $1',
        [result.workflow.id],
      );
      expect(workflow).toEqual({
        name: definition.name,
        state: result.workflow.state,
        input: requests[index]?.input,
      });
      const taskRows = await query<Record<string, unknown>>(
        url(),
        `select id, step, queue, state, max_attempts, run_at is not null as ready,
            (extract(epoch from deadline_at - created_at) * 1000)::float8 as deadline_ms
           from causeway_tasks where workflow_id = $1`,
        [result.workflow.id],
      );
      const byStep = new Map(taskRows.map((row) => [row.step, row]));
      const taskIds = definition.steps.map((step) => byStep.get(step.name)?.id as string);
      const plan = createWorkflowRun(
        definition,
        { workflowId: result.workflow.id, taskIds },
        new Date(0),
      );
      expect(plan.run.state).toBe(result.workflow.state);
      expect(taskRows).toHaveLength(definition.steps.length);
      definition.steps.forEach((step, position) => {
        const planned = plan.run.tasks[position];
        expect(byStep.get(step.name)).toEqual({
          id: planned?.taskId,
          step: step.name,
          queue: step.queue,
          state: planned?.snapshot.state,
          max_attempts: step.policy.maxAttempts,
          ready: planned?.snapshot.state === 'queued',
          deadline_ms: planned?.snapshot.deadlineAt?.getTime() ?? null,
        });
      });
      const log = await query<Record<string, unknown>>(
        url(),
        `select task_id, step, from_state, to_state, reason, error_category, error_summary,
            actor, attempt, detail
           from causeway_transitions where workflow_id = $1 order by id`,
        [result.workflow.id],
      );
      expect(log).toEqual(
        plan.transitions.map((row) =>
          row.kind === 'workflow'
            ? {
                task_id: null,
                step: null,
                from_state: row.from,
                to_state: row.to,
                reason: row.reason,
                error_category: null,
                error_summary: null,
                actor: row.actor,
                attempt: 0,
                detail: row.step === null ? null : { step: row.step },
              }
            : {
                task_id: row.taskId,
                step: row.step,
                from_state: row.edge.from,
                to_state: row.edge.to,
                reason: row.edge.reason,
                error_category: row.edge.errorCategory,
                error_summary: row.edge.errorSummary,
                actor: row.edge.actor,
                attempt: row.edge.attempt,
                detail: row.edge.detail,
              },
        ),
      );
      tasks += taskRows.length;
      transitions += log.length;
    }
    // Nothing was written for the stored key's request.
    expect(await tableCounts(url())).toEqual({
      workflows: before.workflows + 8,
      tasks: before.tasks + tasks,
      transitions: before.transitions + transitions,
    });
  });
});

describe('a large batch is one atomic submit', () => {
  const size = 517;
  const simpleRequests = (prefix: string, count = size) =>
    Array.from({ length: count }, (_, index) => ({
      name: 'adm-simple',
      input: { label: `${prefix}-${index}` },
    }));

  it('keys repeated far apart in it and keys already stored are deduplicated', async () => {
    const cw = engine();
    const earlier = await cw.submit(
      'adm-simple',
      { label: 'stored' },
      { idempotencyKey: 'big-stored' },
    );
    const before = await tableCounts(url());
    const requests: { name: string; input: unknown; idempotencyKey?: string }[] =
      simpleRequests('big');
    const lastChunk = size - 3;
    requests[1] = { name: 'adm-simple', input: { label: 'x' }, idempotencyKey: 'big-twin' };
    requests[lastChunk] = { name: 'adm-simple', input: { label: 'y' }, idempotencyKey: 'big-twin' };
    requests[260] = {
      name: 'adm-simple',
      input: { label: 'z' },
      idempotencyKey: 'big-stored',
    };
    const results = await cw.submitMany(requests);
    expect(results).toHaveLength(size);
    expect(results[lastChunk]).toEqual({ workflow: results[1]?.workflow, deduplicated: true });
    expect(results[260]).toEqual({
      workflow: earlier.workflow,
      deduplicated: true,
    });
    expect(results.filter((result) => result.deduplicated)).toHaveLength(2);
    const created = size - 2;
    expect(new Set(results.map((result) => result.workflow.id)).size).toBe(created + 1);
    expect(await tableCounts(url())).toEqual({
      workflows: before.workflows + created,
      tasks: before.tasks + created,
      transitions: before.transitions + 2 * created,
    });
    expect(await workflowCountByKey('adm-simple', 'big-twin')).toBe(1);
    // Every answer names a stored workflow in the state it reports.
    const stored = await query<{ id: string; state: string }>(
      url(),
      'select id, state from causeway_workflows where id = any($1::uuid[])',
      [results.map((result) => result.workflow.id)],
    );
    expect(stored).toHaveLength(created + 1);
    expect(stored.every((row) => row.state === 'queued')).toBe(true);
    await expectLogIsSound(url());
  });

  it('a database failure at its last request leaves nothing of the others', async () => {
    const cw = engine();
    // A database-side failure that admission cannot see: a trigger refusing one input.
    await query(
      url(),
      `create function adm_refuse() returns trigger language plpgsql as $$
       begin
         if new.input->>'label' = 'refused' then raise exception 'refused by test trigger'; end if;
         return new;
       end $$;
       create trigger adm_refuse before insert on causeway_workflows
         for each row execute function adm_refuse()`,
    );
    try {
      const before = await tableCounts(url());
      const requests = simpleRequests('doomed');
      requests[size - 1] = { name: 'adm-simple', input: { label: 'refused' } };
      await expect(cw.submitMany(requests)).rejects.toThrow('refused by test trigger');
      expect(await tableCounts(url())).toEqual(before);
      // The engine's pool is healthy afterwards.
      const after = await cw.submitMany(simpleRequests('after', 3));
      expect(after).toHaveLength(3);
    } finally {
      await query(
        url(),
        'drop trigger adm_refuse on causeway_workflows; drop function adm_refuse()',
      );
    }
  });

  it("in the caller's transaction: all of it rolls back or commits with it", async () => {
    const cw = engine();
    const before = await tableCounts(url());
    await expect(
      cw.db.transaction().execute(async (tx) => {
        await cw.submitMany(simpleRequests('caller-rb'), { transaction: tx });
        throw new Error('the caller changed its mind');
      }),
    ).rejects.toThrow('the caller changed its mind');
    expect(await tableCounts(url())).toEqual(before);
    const results = await cw.db
      .transaction()
      .execute((tx) => cw.submitMany(simpleRequests('caller-ok'), { transaction: tx }));
    expect(results).toHaveLength(size);
    expect((await tableCounts(url())).workflows).toBe(before.workflows + size);
  });

  it('a capped queue refuses a large batch at the door, writing nothing', async () => {
    const cw = engine();
    const before = await tableCounts(url());
    const requests = [
      ...simpleRequests('with-capped'),
      ...Array.from({ length: 6 }, (_, index) => ({
        name: 'adm-capped',
        input: { label: `big-capped-${index}` },
      })),
    ];
    const error = await engineError(cw.submitMany(requests));
    expect(error.code).toBe('queue_full');
    expect(await tableCounts(url())).toEqual(before);
  });
});

describe('admission control: a capped queue refuses at the door (seed 002)', () => {
  it('fills to maxBacklog, refuses the next submit writing nothing, admits again once drained', async () => {
    const cw = engine();
    for (let index = 1; index <= 4; index += 1) {
      await cw.submit('adm-capped', { label: `c${index}` }, { idempotencyKey: `cap-${index}` });
    }
    // A batch that would overfill the queue is refused as a whole.
    let before = await tableCounts(url());
    const batch = await engineError(
      cw.submitMany([
        { name: 'adm-capped', input: { label: 'b1' } },
        { name: 'adm-capped', input: { label: 'b2' } },
      ]),
    );
    expect(batch.code).toBe('queue_full');
    expect(await tableCounts(url())).toEqual(before);

    const fifth = await cw.submit('adm-capped', { label: 'c5' }, { idempotencyKey: 'cap-5' });
    expect(fifth.deduplicated).toBe(false);
    before = await tableCounts(url());
    const full = await engineError(cw.submit('adm-capped', { label: 'c6' }));
    expect(full.code).toBe('queue_full');
    expect(full.details).toMatchObject({ queue: 'q-capped', maxBacklog: 5 });
    expect(await tableCounts(url())).toEqual(before);
    // A repeat of an accepted submit is not new work: it answers the existing workflow.
    const repeat = await cw.submit('adm-capped', { label: 'c1' }, { idempotencyKey: 'cap-1' });
    expect(repeat.deduplicated).toBe(true);
    expect(await tableCounts(url())).toEqual(before);
    // Work on other queues is not affected by this cap.
    await cw.submit('adm-simple', { label: 'other-queue' });

    const worker = await cw.startWorker({ queues: ['q-capped'], concurrency: 2 });
    await waitFor(
      async () => {
        const rows = await query<{ n: number }>(
          url(),
          `select count(*)::int as n from causeway_workflows where name = 'adm-capped' and state = 'succeeded'`,
        );
        return rows[0]?.n === 5;
      },
      { description: 'the capped queue to drain' },
    );
    const after = await cw.submit('adm-capped', { label: 'c7' });
    expect(after.deduplicated).toBe(false);
    await waitFor(async () => (await cw.getWorkflow(after.workflow.id))?.state === 'succeeded');
    await worker.stop();
  });
});

describe('admission control under concurrency', () => {
  it('20 parallel submits to a queue with room for 5 admit exactly 5', async () => {
    // Earlier tests drained the capped queue: its ready backlog is empty.
    const backlog = await query<{ n: number }>(
      url(),
      `select count(*)::int as n from causeway_tasks where queue = 'q-capped' and state = 'queued'`,
    );
    expect(backlog[0]?.n).toBe(0);
    const engines = [engine(), engine()];
    const before = await tableCounts(url());
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        (engines[index % 2] as Engine).submit('adm-capped', { label: `race-${index}` }).then(
          () => 'accepted',
          (error: unknown) => (error instanceof EngineError ? error.code : String(error)),
        ),
      ),
    );
    expect(outcomes.filter((outcome) => outcome === 'accepted')).toHaveLength(5);
    expect(outcomes.filter((outcome) => outcome === 'queue_full')).toHaveLength(15);
    expect(await tableCounts(url())).toEqual({
      workflows: before.workflows + 5,
      tasks: before.tasks + 10,
      transitions: before.transitions + 15,
    });
    // Tidy: nothing on this queue may run later in this file.
    const rows = await query<{ id: string }>(
      url(),
      `select id from causeway_workflows where name = 'adm-capped' and state = 'queued'`,
    );
    for (const row of rows) await engines[0]?.cancelWorkflow(row.id);
  });
});

describe('bad input is refused with a stable code and changes nothing (R34)', () => {
  const cases: readonly [string, (cw: Engine) => Promise<unknown>, string][] = [
    ['an unknown workflow name', (cw) => cw.submit('adm-nope', {}), 'unknown_workflow'],
    [
      'a field of the wrong type',
      (cw) => cw.submit('adm-strict', { name: 'x', count: 1.5 }),
      'invalid_input',
    ],
    ['a missing field', (cw) => cw.submit('adm-strict', { count: 1 }), 'invalid_input'],
    ['input that is not an object', (cw) => cw.submit('adm-strict', 'hello'), 'invalid_input'],
    [
      'input over the size limit',
      (cw) => cw.submit('adm-strict', { name: 'big', count: 1, blob: 'a'.repeat(300_000) }),
      'input_too_large',
    ],
    [
      'a NUL character',
      (cw) => cw.submit('adm-strict', { name: 'a\u0000b', count: 1 }),
      'unstorable_string',
    ],
    [
      'a lone high surrogate',
      (cw) => cw.submit('adm-strict', { name: 'x\uD800', count: 1 }),
      'unstorable_string',
    ],
    [
      'a lone low surrogate deep in an array',
      (cw) => cw.submit('adm-strict', { name: 'ok', count: 1, tags: ['fine', 'x\uDC00y'] }),
      'unstorable_string',
    ],
    [
      'a NUL in an object key',
      (cw) => cw.submit('adm-strict', { name: 'ok', count: 1, meta: { 'k\u0000': 'v' } }),
      'unstorable_string',
    ],
    [
      'an empty idempotency key',
      (cw) => cw.submit('adm-simple', { label: 'x' }, { idempotencyKey: '' }),
      'invalid_idempotency_key',
    ],
    [
      'an oversized idempotency key',
      (cw) => cw.submit('adm-simple', { label: 'x' }, { idempotencyKey: 'k'.repeat(513) }),
      'invalid_idempotency_key',
    ],
    [
      'a NUL in the idempotency key',
      (cw) => cw.submit('adm-simple', { label: 'x' }, { idempotencyKey: 'k\u0000' }),
      'invalid_idempotency_key',
    ],
    [
      'an empty key from the key function',
      (cw) => cw.submit('adm-keyed', { k: '' }),
      'invalid_idempotency_key',
    ],
    [
      'bad input reusing an accepted key',
      (cw) => cw.submit('adm-strict', { name: '', count: 1 }, { idempotencyKey: 'accepted' }),
      'invalid_input',
    ],
  ];

  it.each(cases)('%s', async (_label, submit, code) => {
    const cw = engine();
    const accepted = await cw.submit(
      'adm-strict',
      { name: 'accepted', count: 1 },
      { idempotencyKey: 'accepted' },
    );
    const acceptedBefore = await cw.getWorkflow(accepted.workflow.id);
    const before = await tableCounts(url());
    const error = await engineError(submit(cw));
    expect(error.code).toBe(code);
    expect(error.message.length).toBeGreaterThan(0);
    expect(await tableCounts(url())).toEqual(before);
    expect(await cw.getWorkflow(accepted.workflow.id)).toEqual(acceptedBefore);
  });

  it('names where the unstorable string is', async () => {
    const cw = engine();
    const error = await engineError(
      cw.submit('adm-strict', { name: 'ok', count: 1, tags: ['fine', 'x\uDC00y'] }),
    );
    expect(error.details).toMatchObject({ path: ['tags', 1] });
  });

  it('says how big the input is, the limit, and to pass a payloadRef instead (R30)', async () => {
    const cw = engine();
    const error = await engineError(
      cw.submit('adm-strict', { name: 'big', count: 1, blob: 'a'.repeat(300_000) }),
    );
    expect(error.code).toBe('input_too_large');
    expect(error.message).toMatch(
      /^input is 300\d{3} bytes as JSON, over the limit of 262144 bytes: .*reference \(storage URI \+ version\).*payloadRef\(\{ uri, version \}\)/,
    );
  });
});

describe("a submit's own AbortSignal matters only until commit (R6)", () => {
  it('an already aborted signal writes nothing', async () => {
    const cw = engine();
    const before = await tableCounts(url());
    const error = await engineError(
      cw.submit('adm-simple', { label: 'never' }, { signal: AbortSignal.abort() }),
    );
    expect(error.code).toBe('aborted');
    expect(await tableCounts(url())).toEqual(before);
  });

  it('a signal aborted while the insert waits (before commit) writes nothing', async () => {
    const cw = engine();
    const before = await tableCounts(url());
    // Another caller's uncommitted submit with the same key makes ours wait on the unique index.
    const release = gate();
    let holding = false;
    const holder = cw.db
      .transaction()
      .execute(async (tx) => {
        await cw.submit(
          'adm-simple',
          { label: 'holder' },
          { idempotencyKey: 'abort-race', transaction: tx },
        );
        holding = true;
        await release.promise;
        throw new Error('holder rolls back');
      })
      .catch((error: unknown) => error);
    await waitFor(() => holding, { description: 'the holder to insert its row' });

    const controller = new AbortController();
    const ours = cw
      .submit(
        'adm-simple',
        { label: 'ours' },
        { idempotencyKey: 'abort-race', signal: controller.signal },
      )
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    await waitFor(
      async () => {
        const rows = await query<{ n: number }>(
          url(),
          `select count(*)::int as n from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock'`,
        );
        return (rows[0]?.n ?? 0) > 0;
      },
      { description: 'our submit to wait on the holder' },
    );
    controller.abort();
    release.open();
    expect(await holder).toMatchObject({ message: 'holder rolls back' });
    const error = await ours;
    expect(error).toBeInstanceOf(EngineError);
    expect((error as EngineError).code).toBe('aborted');
    expect(await tableCounts(url())).toEqual(before);
    expect(await workflowCountByKey('adm-simple', 'abort-race')).toBe(0);
  });

  it('aborting after the submit returned changes nothing: the work belongs to the service', async () => {
    const cw = engine();
    const controller = new AbortController();
    const accepted = await cw.submit(
      'adm-simple',
      { label: 'kept' },
      { signal: controller.signal },
    );
    controller.abort();
    const worker = await cw.startWorker({ queues: ['q-adm'], concurrency: 2 });
    const view = await waitFor(async () => {
      const current = await cw.getWorkflow(accepted.workflow.id);
      return current?.state === 'succeeded' ? current : undefined;
    });
    await worker.stop();
    expect(view.tasks[0]?.transitions.map((row) => row.reason)).toEqual([
      'submitted',
      'lease_acquired',
      'completed',
    ]);
  });
});

describe('the log of this file', () => {
  it('holds only allowed edges, in unbroken chains, matching every current state (R25)', async () => {
    await expectLogIsSound(url());
  });
});
