import { sql } from 'kysely';
import type { Db } from '../database';
import { claimedStateSql, leaseHoldingStatesSql } from '../task-states';
import type { LeaseFence } from './lease-fence';

/**
 * A fenced write of the running claim: marks "effect started" and optionally stores a
 * checkpoint or progress. Allowed while `leased` or `cancel_requested` (a checkpoint records
 * what already happened). Returns the task's state, or null if the claim is no longer held.
 */
export async function taskWriteFenced(
  db: Db,
  fence: LeaseFence,
  change: {
    effectStarted?: boolean;
    evidence?: string;
    checkpoint?: { name: string; dataJson: string };
    progressJson?: string;
  },
): Promise<'leased' | 'cancel_requested' | null> {
  const checkpoint = change.checkpoint;
  const { rows } = await sql<{ state: 'leased' | 'cancel_requested' }>`
    update causeway_tasks set
      -- Only a running claim starts an effect; under cancel_requested the cancel wins.
      effect_started = effect_started or (${change.effectStarted ?? false} and state = ${claimedStateSql}),
      checkpoints = case when ${checkpoint?.name ?? null}::text is null then checkpoints
                    else checkpoints || jsonb_build_object(${checkpoint?.name ?? null}::text, ${checkpoint?.dataJson ?? null}::jsonb) end,
      progress = coalesce(${change.progressJson ?? null}::jsonb, progress),
      evidence = coalesce(${change.evidence ?? null}::text, evidence)
    where id = ${fence.taskId} and lease_holder = ${fence.holder} and lease_epoch = ${fence.epoch}
      and state in (${leaseHoldingStatesSql}) and lease_expires_at > causeway_now()
    returning state`.execute(db);
  return rows[0]?.state ?? null;
}
