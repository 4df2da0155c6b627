/**
 * The one-statement claim and settle commit on their own (no BEGIN, no COMMIT). If either
 * wrote fewer rows than it decided (a row changed in a way the statement could not follow),
 * the statement itself must fail and undo everything it wrote, since no client transaction
 * is left to roll back. A trigger that silently skips the parent's update stands in for such
 * a change here.
 */
import { defineWorkflow, step, workflowRegistry } from '@causeway/workflow';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { CausewayDatabase } from '../../packages/engine/src/db/schema';
import { claimReadyTasks } from '../../packages/engine/src/runtime/claim/claim-ready-tasks';
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

const opened: Kysely<CausewayDatabase>[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((db) => db.destroy()));
});

/** A Kysely on the test database: statements outside a transaction commit on their own. */
function autocommitDb(url: string): Kysely<CausewayDatabase> {
  const db = new Kysely<CausewayDatabase>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 2 }) }),
  });
  opened.push(db);
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
