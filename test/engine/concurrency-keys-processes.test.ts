/**
 * R50 exactness from the log, not from the engine's own counters: four worker processes race
 * over 50 keys of limit 2, their handlers sleeping random times; once every task succeeded,
 * the most tasks of any key whose lease intervals overlap, on database time, is at most 2.
 */
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { maxSlotOverlap } from './concurrency-key-log';
import { type Child, spawnFixture } from './fixtures/children';
import { keyedRaceGroup, keyedRaceLimit, keyedRaceWorkflow } from './fixtures/keyed-race-workflow';

const database = useTestDatabase();

const processCount = 4;
const keyCount = 50;
const taskCount = 400;

describe('4 worker processes racing over 50 keys of limit 2 (R50)', () => {
  it('never hold more than 2 tasks of a key at once, on the log’s database time', async () => {
    const url = database().url;
    // The test process only submits and observes: its handler must never run.
    const engine = testEngine(url, {
      workflows: [
        keyedRaceWorkflow(async () => {
          throw new Error('the parent process never runs a keyed task');
        }),
      ],
    });
    await engine.migrate();
    const children: Child[] = [];
    for (let index = 0; index < processCount; index += 1) {
      children.push(
        spawnFixture(
          'keyed-race-worker.ts',
          {
            CAUSEWAY_CHILD_DATABASE_URL: url,
            CAUSEWAY_CHILD_CONCURRENCY: '8',
            CAUSEWAY_CHILD_LEASE_MS: '10000',
          },
          `keyed-race-worker-${index}`,
        ),
      );
    }
    const holders = (await Promise.all(children.map((child) => child.ready(60_000)))).map(
      (ready) => ready.holder,
    );
    // All four are idle and listening; one batch wakes them all at once.
    const submitted = await engine.submitMany(
      Array.from({ length: taskCount }, (_, n) => ({
        name: 'keyed-race-processes',
        input: { tenant: `tenant-${n % keyCount}`, n },
      })),
    );
    const ids = submitted.map((result) => result.workflow.id);
    const succeeded = async () =>
      (
        await query<{ n: number }>(
          url,
          `select count(*)::int as n from causeway_workflows
           where id = any($1::uuid[]) and state = 'succeeded'`,
          [ids],
        )
      )[0]?.n;
    try {
      await waitFor(async () => (await succeeded()) === taskCount, {
        timeoutMs: 45_000,
        intervalMs: 100,
        description: `all ${taskCount} keyed workflows succeeded`,
      });
    } catch (error) {
      throw new Error(
        `${String(error)}\n` +
          children.map((child) => `--- ${child.name} ---\n${child.output()}`).join('\n'),
      );
    }
    const exits = await Promise.all(children.map((child) => child.stop()));
    expect(exits).toEqual(children.map(() => ({ code: 0, signal: null })));

    const overlap = await maxSlotOverlap(url, keyedRaceGroup);
    expect(overlap.size).toBe(keyCount);
    const over = [...overlap].filter(([, most]) => most > keyedRaceLimit);
    if (over.length > 0) {
      // The log of the keys over the limit, so a failure tells its own interleaving.
      const edges = await query<Record<string, unknown>>(
        url,
        `select t.concurrency_key as key, l.id, l.task_id, l.from_state, l.to_state, l.reason,
           l.actor, to_char(l.at, 'HH24:MI:SS.US') as at
         from causeway_transitions as l join causeway_tasks as t on t.id = l.task_id
         where t.concurrency_key = any($1::text[]) order by t.concurrency_key, l.at, l.id`,
        [over.map(([key]) => key)],
      );
      expect.fail(
        `over the limit: ${JSON.stringify(over)}\n${edges.map((e) => JSON.stringify(e)).join('\n')}`,
      );
    }
    // The race was real: some key had both its slots held at once.
    expect(Math.max(...overlap.values())).toBe(keyedRaceLimit);
    // Each task was leased once, and all four processes leased some.
    const leases = await query<{ actor: string; n: number }>(
      url,
      `select actor, count(*)::int as n from causeway_transitions
       where reason = 'lease_acquired' and task_id is not null group by actor`,
    );
    expect(leases.reduce((sum, row) => sum + row.n, 0)).toBe(taskCount);
    expect(leases.map((row) => row.actor).sort()).toEqual(
      holders.map((holder) => `worker:${holder}`).sort(),
    );
    expect(await logMismatches(url)).toEqual([]);
  }, 90_000);
});
