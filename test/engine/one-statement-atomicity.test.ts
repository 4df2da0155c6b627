/**
 * The one-statement claim, settle and event send commit on their own (no BEGIN, no COMMIT).
 * If one wrote fewer rows than it decided (a row changed in a way the statement could not
 * follow), the statement itself must fail and undo everything it wrote, since no client
 * transaction is left to roll back. A trigger that silently skips the parent's update stands
 * in for such a change here. The send is tried in each of its texts (one event or two, with
 * the promotion part or without it) and as the send function (one event).
 */
import { randomUUID } from 'node:crypto';
import { defineWorkflow, step, workflow, workflowRegistry } from '@causeway/workflow/internal';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { registerPool } from '../../packages/engine/src/db/direct';
import { eventSendInOneStatement } from '../../packages/engine/src/db/events/event-send-statement';
import type { CausewayDatabase } from '../../packages/engine/src/db/schema';
import { claimReadyTasks } from '../../packages/engine/src/runtime/claim/claim-ready-tasks';
import { eventSendShapeOf } from '../../packages/engine/src/runtime/events/one-statement-send';
import { settleInOneStatement } from '../../packages/engine/src/runtime/settle/one-statement-settle';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, testEngine } from '../helpers/engine';

const database = useTestDatabase();

const single = defineWorkflow({
  name: 'atomic-single',
  input: z.object({}),
  steps: { only: step({ queue: 'atomic', run: () => 'done' }) },
});
const apply = { definitions: workflowRegistry([single]), leaseMs: 30_000, random: () => 0.5 };
const holder = 'atomic-host/1/boot';

const opened: { readonly db: Kysely<CausewayDatabase>; readonly pool: pg.Pool }[] = [];
afterEach(async () => {
  await Promise.all(
    opened.splice(0).map(async ({ db, pool }) => {
      await db.destroy();
      // Kysely ends only a pool it has used; the send function's calls go to it directly.
      if (!pool.ended) await pool.end();
    }),
  );
});

/**
 * A Kysely on the test database: statements outside a transaction commit on their own. With
 * `sessionFunctions`, one event's send runs as the send function, as on an engine's pool.
 */
function autocommitDb(url: string, sessionFunctions = false): Kysely<CausewayDatabase> {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  const db = new Kysely<CausewayDatabase>({ dialect: new PostgresDialect({ pool }) });
  if (sessionFunctions) registerPool(db, pool, { sessionState: true });
  opened.push({ db, pool });
  return db;
}

/** Makes every update of a parent to `state` a silent no-op (zero rows), until dropped. */
async function skipParentUpdatesTo(url: string, state: string): Promise<void> {
  await query(
    url,
    `create or replace function test_skip_parent_update() returns trigger
       language plpgsql as $$ begin return null; end $$;
     create trigger test_skip_parent_update before update on causeway_workflows
       for each row when (new.state = '${state}') execute function test_skip_parent_update()`,
  );
}

async function allowParentUpdates(url: string): Promise<void> {
  await query(url, 'drop trigger test_skip_parent_update on causeway_workflows');
}

async function taskRow(url: string, workflowId: string) {
  const rows = await query<{ id: string; state: string; attempt: number; lease_epoch: string }>(
    url,
    'select id, state, attempt, lease_epoch::text from causeway_tasks where workflow_id = $1',
    [workflowId],
  );
  return rows[0] as (typeof rows)[number];
}

async function logReasons(url: string, workflowId: string): Promise<string[]> {
  const rows = await query<{ reason: string }>(
    url,
    'select reason from causeway_transitions where workflow_id = $1 order by id',
    [workflowId],
  );
  return rows.map((row) => row.reason);
}

describe('the one-statement claim and settle on their own', () => {
  it('write nothing when they wrote fewer rows than they decided', async () => {
    const url = database().url;
    const engine = testEngine(url, { workflows: [single] });
    await engine.migrate();
    const { workflow } = await engine.submit('atomic-single', {});
    const db = autocommitDb(url);
    const submitted = await logReasons(url, workflow.id);

    // The claim: the task's edge would be written, its parent's would not.
    await skipParentUpdatesTo(url, 'running');
    await expect(
      claimReadyTasks(db, apply, { queue: 'atomic', limit: 4, holder }),
    ).rejects.toMatchObject({ code: '40001' });
    expect(await taskRow(url, workflow.id)).toMatchObject({ state: 'queued', attempt: 0 });
    expect(await logReasons(url, workflow.id)).toEqual(submitted);
    await allowParentUpdates(url);

    const { claimed } = await claimReadyTasks(db, apply, { queue: 'atomic', limit: 4, holder });
    expect(claimed.map((entry) => entry.task.workflowId)).toEqual([workflow.id]);
    const leased = await taskRow(url, workflow.id);
    expect(leased.state).toBe('leased');
    const afterClaim = await logReasons(url, workflow.id);

    // The settle: the task's edge would be written, its parent's would not.
    const request = {
      taskId: leased.id,
      workflowId: workflow.id,
      event: { type: 'complete', actor: { kind: 'worker', name: holder } } as const,
      fence: { taskId: leased.id, holder, epoch: Number(leased.lease_epoch) },
      extra: { outputJson: '"done"' },
    };
    await skipParentUpdatesTo(url, 'succeeded');
    await expect(settleInOneStatement(db, apply, [request])).rejects.toMatchObject({
      code: '40001',
    });
    expect(await taskRow(url, workflow.id)).toMatchObject({ state: 'leased' });
    expect(await logReasons(url, workflow.id)).toEqual(afterClaim);
    await allowParentUpdates(url);

    const settled = await settleInOneStatement(db, apply, [request]);
    expect([...settled.decided.values()].map((outcome) => outcome.kind)).toEqual(['applied']);
    expect((await engine.getWorkflow(workflow.id))?.state).toBe('succeeded');
    expect(await logMismatches(url)).toEqual([]);
  });
});

const awaited = {
  name: 'atomic.approved',
  key: (ctx: { input: { key: string } }) => ctx.input.key,
};
const alone = workflow({ name: 'atomic-alone', input: z.object({ key: z.string() }) })
  .event('approval', { ...awaited, timeoutMs: 86_400_000 })
  .build();
const chained = workflow({ name: 'atomic-chained', input: z.object({ key: z.string() }) })
  .event('approval', { ...awaited, timeoutMs: 86_400_000 })
  .step('publish', { after: ['approval'], queue: 'atomic', run: () => null })
  .build();

describe('the one-statement event send on its own', () => {
  it.each([
    { events: 1, promotes: false, sessionFunctions: false },
    { events: 1, promotes: true, sessionFunctions: false },
    { events: 1, promotes: false, sessionFunctions: true },
    { events: 1, promotes: true, sessionFunctions: true },
    { events: 2, promotes: false, sessionFunctions: false },
    { events: 2, promotes: true, sessionFunctions: false },
  ])(
    'writes nothing when it wrote fewer rows than it decided ($events events, promotes $promotes, send function $sessionFunctions)',
    async ({ events, promotes, sessionFunctions }) => {
      const url = database().url;
      const engine = testEngine(url, { workflows: [alone, chained] });
      await engine.migrate();
      const prefix = `${events}-${promotes}-${sessionFunctions}`;
      const keys = Array.from({ length: events }, (_, i) => `${prefix}-${i}`);
      const submitted = await engine.submitMany(
        keys.map((key) => ({ name: promotes ? 'atomic-chained' : 'atomic-alone', input: { key } })),
      );
      const ids = submitted.map((answer) => answer.workflow.id);
      const db = autocommitDb(url, sessionFunctions);
      const shape = eventSendShapeOf(engine.definitions);
      const send = () => {
        const eventIds = keys.map(() => randomUUID());
        return eventSendInOneStatement(
          db,
          shape,
          {
            ids: eventIds,
            names: keys.map(() => awaited.name),
            keys,
            payloads: keys.map(() => '{}'),
            idempotencyKeys: keys.map(() => null),
            reasons: keys.map(() => null),
            outputs: keys.map(() => '{}'),
            details: eventIds.map((eventId) => JSON.stringify({ eventId })),
            sentBy: 'client',
            actor: 'client',
          },
          { promotes },
        );
      };
      const before = await Promise.all(ids.map((id) => logReasons(url, id)));
      await skipParentUpdatesTo(url, promotes ? 'running' : 'succeeded');
      await expect(send()).rejects.toMatchObject({ code: '40001' });
      for (const [index, id] of ids.entries()) {
        expect(await taskRow(url, id)).toMatchObject({ state: 'waiting' });
        expect(await logReasons(url, id)).toEqual(before[index]);
      }
      const stored = await query(url, 'select 1 from causeway_events where key = any($1)', [keys]);
      expect(stored).toEqual([]);
      await allowParentUpdates(url);

      const sent = await send();
      expect(sent.written).toBe(true);
      expect(sent.completed.map((task) => task.workflowId).sort()).toEqual([...ids].sort());
      for (const id of ids) {
        const tasks = await query<{ step: string; state: string }>(
          url,
          'select step, state from causeway_tasks where workflow_id = $1 order by step',
          [id],
        );
        expect(tasks).toEqual(
          promotes
            ? [
                { step: 'approval', state: 'succeeded' },
                { step: 'publish', state: 'queued' },
              ]
            : [{ step: 'approval', state: 'succeeded' }],
        );
      }
      expect(await logMismatches(url)).toEqual([]);
    },
  );
});
