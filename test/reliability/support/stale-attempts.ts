/**
 * The attempt ledger after a fault run (R56): every refused late result a stopped-and-continued
 * worker left is the `stale` attempt of the claim it was fenced on, and the engine's attempts of
 * each such task equal what the stored rows say (test/helpers/attempt-log.ts).
 */
import type { Engine } from '@causeway/engine';
import { expect } from 'vitest';
import { attemptsFromLog } from '../../helpers/attempt-log';
import { query } from '../../helpers/engine';

/** At most this many tasks are read back through the engine (each is a full workflow read). */
const checkedAtMost = 200;

export async function checkStaleAttempts(databaseUrl: string, engine: Engine): Promise<number> {
  const refused = await query<{
    task_id: string;
    workflow_id: string;
    epoch: number;
    holder: string;
  }>(
    databaseUrl,
    `select task_id, workflow_id, lease_epoch::int as epoch, holder
       from causeway_stale_results order by refused_at`,
  );
  for (const row of refused.slice(0, checkedAtMost)) {
    const task = (await engine.getWorkflow(row.workflow_id))?.tasks.find(
      (candidate) => candidate.id === row.task_id,
    );
    expect(task?.attempts).toEqual(await attemptsFromLog(databaseUrl, row.task_id));
    const attempt = task?.attempts.find((candidate) => candidate.epoch === row.epoch);
    expect(attempt, `the claim of a refused result of task ${row.task_id}`).toMatchObject({
      holder: row.holder,
      outcome: 'stale',
    });
  }
  return refused.length;
}
