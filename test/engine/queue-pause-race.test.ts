/**
 * R53 under races: a pause racing claimers, CAUSEWAY_RACE_ROUNDS times (default 500). Claims
 * by the one-statement path and by the full path (`claimTasks` in a transaction) loop on a
 * queue with ready tasks while an operator pauses it; no claim that started after the pause
 * committed takes a task.
 */
import { defineWorkflow, step, workflowRegistry } from '@causeway/workflow/internal';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { claimTasks } from '../../packages/engine/src/runtime/claim/claim-in-full';
import { claimReadyTasks } from '../../packages/engine/src/runtime/claim/claim-ready-tasks';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, testEngine } from '../helpers/engine';

const database = useTestDatabase();
const rounds = Number(process.env.CAUSEWAY_RACE_ROUNDS ?? 500);

const heldWork = defineWorkflow({
  name: 'held-race',
  input: z.object({ n: z.number().int() }),
  steps: { only: step<{ n: number }>({ queue: 'held', run: (ctx) => ctx.input.n }) },
});

describe('a pause racing claimers', () => {
  it(`lets no claim that started after the pause committed take a task (${rounds} rounds)`, async () => {
    const url = database().url;
    const engine = testEngine(url, { workflows: [heldWork] });
    await engine.migrate();
    const apply = {
      definitions: workflowRegistry([heldWork]),
      leaseMs: 60_000,
      random: Math.random,
    };
    const request = (holder: string) => ({ queue: 'held', limit: 1, holder });
    const oneStatement = async (holder: string) =>
      (await claimReadyTasks(engine.db, apply, request(holder))).claimed.length;
    const full = (holder: string) =>
      engine.db.transaction().execute(async (tx) => {
        const result = await claimTasks(tx, apply, request(holder));
        return result.outcomes.filter((o) => o.kind === 'applied' && o.edge.to === 'leased').length;
      });
    const problems: string[] = [];
    let claimedBeforePause = 0;
    let heldByPause = 0;
    for (let round = 0; round < rounds; round += 1) {
      await engine.resumeQueue('held', { operator: 'race' });
      const ids: string[] = [];
      for (let n = 0; n < 6; n += 1)
        ids.push((await engine.submit('held-race', { n })).workflow.id);
      let paused = false;
      const claimer = async (name: string, claim: (holder: string) => Promise<number>) => {
        for (;;) {
          const startedAfterPause = paused;
          const taken = await claim(name);
          if (startedAfterPause) {
            if (taken > 0) problems.push(`round ${round}: ${name} took ${taken} after the pause`);
            return;
          }
          claimedBeforePause += taken;
        }
      };
      const pause = async () => {
        await new Promise((resolve) => setTimeout(resolve, round % 3));
        await engine.pauseQueue('held', { operator: 'race', reason: `round ${round}` });
        paused = true;
      };
      await Promise.all([
        claimer('one-a', oneStatement),
        claimer('one-b', oneStatement),
        claimer('full', full),
        pause(),
      ]);
      const [left] = await query<{ n: number }>(
        url,
        `select count(*)::int as n from causeway_tasks
          where state = 'queued' and workflow_id = any($1::uuid[])`,
        [ids],
      );
      if ((left?.n ?? 0) > 0) heldByPause += 1;
    }
    console.info(
      `[queue-pause-race] ${rounds} rounds: ${claimedBeforePause} claims before the pause, the pause held some of the round's own tasks in ${heldByPause} rounds`,
    );
    expect(problems).toEqual([]);
    // The races happened both ways: claims won before pauses, and pauses held ready tasks.
    expect(claimedBeforePause).toBeGreaterThan(0);
    expect(heldByPause).toBeGreaterThan(0);
    expect(await logMismatches(url)).toEqual([]);
  }, 300_000);
});
