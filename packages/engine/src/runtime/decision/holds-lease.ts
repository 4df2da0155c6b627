import { leaseHoldingStates } from '@causeway/workflow/internal';
import type { LeaseFence } from '../../db/lease/lease-fence';
import type { TaskRecord } from '../../db/rows';

/**
 * The claim still holds the lease: a state whose task holds one (`leaseHoldingStates`), same
 * holder and epoch, not expired (R7).
 */
export function holdsLease(task: TaskRecord, fence: LeaseFence, now: Date): boolean {
  return (
    leaseHoldingStates.includes(task.state) &&
    task.leaseHolder === fence.holder &&
    task.leaseEpoch === fence.epoch &&
    task.leaseExpiresAt !== null &&
    task.leaseExpiresAt.getTime() > now.getTime()
  );
}
