/**
 * R54 with R59: a retention run removes the rows of the versions listing that no worker
 * serves (no registry row lists them) and no kept workflow records, so a version long gone
 * from every deploy stops being listed as `drained`. A version a live worker serves, one only
 * a stale registry row lists (a crashed worker, not yet pruned) and one a kept workflow records
 * stay; a version whose last workflow the run removes goes in that run. A worker that registers
 * while a run holds its version's row waits for the run, then writes the row again.
 */
import type { Engine } from '@causeway/engine';
import { workflow } from '@causeway/workflow';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  unlistedVersionsDeleteSql,
  unlistedVersionsLockSql,
} from '../../packages/engine/src/db/retention/version-delete';
import type { CausewayDatabase } from '../../packages/engine/src/db/schema';
import { useTestDatabase } from '../helpers/database';
import { query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { dayMs, submitOnDay, untilSucceeded } from './retention-support';

const database = useTestDatabase();
const url = () => database().url;
const request = { operator: 'ops@example', reason: 'keep 30 days', olderThanMs: 30 * dayMs };

/** One version of a one-step workflow, on the test's queue. */
function versioned(name: string, version: string) {
  return workflow({ name, input: z.object({ n: z.number() }), version, deadlineMs: 300 * dayMs })
    .step('render', { queue: 'q-versions', run: () => version })
    .build();
}

/** An engine that defines only `version` of `name`. */
function engineOf(name: string, version: string): Engine {
  return testEngine(url(), { workflows: [versioned(name, version)] });
}

/** The versions of `name` in the versions listing's table. */
async function storedVersions(name: string): Promise<string[]> {
  const rows = await query<{ version: string }>(
    url(),
    'select version from causeway_workflow_versions where name = $1 order by version',
    [name],
  );
  return rows.map((row) => row.version);
}

async function serveOnce(engine: Engine): Promise<void> {
  await (await engine.startWorker({ queues: ['q-versions'], concurrency: 1 })).stop();
}

afterEach(async () => {
  await setDatabaseClockOffset(url(), 0);
});

describe('retention of the versions listing', () => {
  it('removes the versions no worker serves and no kept workflow records', async () => {
    const name = 'retention-versioned';
    const gone = engineOf(name, 'v-gone');
    await gone.migrate();
    // v-gone: a worker served it and stopped; no workflow ever recorded it.
    await serveOnce(gone);
    // v-old: its one workflow ran on day 0, so it will be past the window.
    const old = engineOf(name, 'v-old');
    const oldWorker = await old.startWorker({ queues: ['q-versions'], concurrency: 1 });
    const oldId = (await old.submit(name, { n: 1 })).workflow.id;
    await untilSucceeded(url(), [oldId]);
    await oldWorker.stop();
    // v-kept: on day +2, one workflow finished and one still queued, which holds the day.
    const kept = engineOf(name, 'v-kept');
    const keptWorker = await kept.startWorker({ queues: ['q-versions'], concurrency: 1 });
    const keptDone = await submitOnDay(kept, 2, name, { n: 2 });
    await untilSucceeded(url(), [keptDone]);
    await keptWorker.stop();
    await submitOnDay(kept, 2, name, { n: 3 });
    await kept.close();

    await setDatabaseClockOffset(url(), 40 * dayMs);
    // v-live: a live worker serves it through the run.
    const live = engineOf(name, 'v-live');
    await live.startWorker({ queues: ['q-versions'], concurrency: 1 });
    // v-stale: only the row of a worker that stopped heartbeating a minute ago lists it.
    await query(
      url(),
      `insert into causeway_workers (holder, host, pid, queues, workflows, sweeper,
         engine_version, app_version, started_at, heartbeat_at, stale_at)
       values ('crashed/9/boot', 'crashed', 9, '[]', $1::jsonb, false, '0.1.0', null,
               causeway_now() - interval '1 hour', causeway_now() - interval '2 minutes',
               causeway_now() - interval '1 minute')`,
      [JSON.stringify([{ name, version: 'v-stale', latest: true, steps: ['render'] }])],
    );
    await query(
      url(),
      `insert into causeway_workflow_versions (name, version, first_served_at, last_served_at)
       values ($1, 'v-stale', causeway_now(), causeway_now())`,
      [name],
    );
    const every = ['v-gone', 'v-kept', 'v-live', 'v-old', 'v-stale'];
    expect(await storedVersions(name)).toEqual(every);
    const listed = async () =>
      Object.fromEntries(
        (await live.versions())
          .filter((each) => each.name === name)
          .map((each) => [each.version, [each.status, each.inFlight]]),
      );
    expect(await listed()).toEqual({
      'v-live': ['serving', 0],
      'v-gone': ['drained', 0],
      'v-old': ['drained', 0],
      'v-kept': ['draining', 1],
      'v-stale': ['drained', 0],
    });

    const dry = await live.purgeFinished({ ...request, dryRun: true });
    expect(dry).toMatchObject({ workflowsRemoved: 1, versionsRemoved: null });
    expect(await storedVersions(name)).toEqual(every);

    const answer = await live.purgeFinished(request);
    expect(answer).toMatchObject({ workflowsRemoved: 1, versionsRemoved: 2 });
    const [run] = await live.retentionRuns({ limit: 1 });
    expect(run).toMatchObject({ id: answer.runId, versionsRemoved: 2 });
    expect(await storedVersions(name)).toEqual(['v-kept', 'v-live', 'v-stale']);
    expect(await listed()).toEqual({
      'v-live': ['serving', 0],
      'v-kept': ['draining', 1],
      'v-stale': ['drained', 0],
    });
    // The finished workflow of v-kept is kept with its day: it alone would keep v-kept too.
    const keptRows = await query<{ n: number }>(
      url(),
      `select count(*)::int as n from causeway_workflows where name = $1 and version = 'v-kept'`,
      [name],
    );
    expect(keptRows[0]?.n).toBe(2);

    const again = await live.purgeFinished(request);
    expect(again).toMatchObject({ workflowsRemoved: 0, versionsRemoved: 0 });
    expect(await storedVersions(name)).toEqual(['v-kept', 'v-live', 'v-stale']);
  });

  it('lets a worker that registers during a run write its version row again', async () => {
    const name = 'retention-raced';
    const first = engineOf(name, 'v-raced');
    await first.migrate();
    await serveOnce(first);
    const db = new Kysely<CausewayDatabase>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url(), max: 1 }) }),
    });
    const second = engineOf(name, 'v-raced');
    let starting: Promise<unknown> | undefined;
    try {
      await db.transaction().execute(async (tx) => {
        const { rows: locked } = await unlistedVersionsLockSql([
          { name, version: 'v-raced' },
        ]).execute(tx);
        expect(locked).toEqual([{ name, version: 'v-raced' }]);
        // Its registration (registry row and version row in one statement) waits for the lock.
        starting = second.startWorker({ queues: ['q-versions'], concurrency: 1 });
        await waitFor(
          async () => {
            const rows = await query<{ n: number }>(
              url(),
              `select count(*)::int as n from pg_stat_activity
                where wait_event_type = 'Lock' and query like '%into causeway_workflow_versions%'`,
            );
            return (rows[0]?.n ?? 0) > 0;
          },
          { description: "the worker's registration waiting for the run's lock" },
        );
        const { rows: deleted } = await unlistedVersionsDeleteSql(locked).execute(tx);
        expect(deleted).toContainEqual({ name, version: 'v-raced' });
      });
      await starting;
    } finally {
      await db.destroy();
    }
    expect(await storedVersions(name)).toEqual(['v-raced']);
    const served = await second.versions();
    expect(served.find((each) => each.name === name)).toMatchObject({
      version: 'v-raced',
      status: 'serving',
      workers: [second.holder],
    });
  });
});
