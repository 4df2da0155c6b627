import type { LeaseFence } from '../../db/lease/lease-fence';
import type { TaskRecord } from '../../db/rows';

/** The claim still holds the lease: same holder and epoch, still running, not expired (R7). */
export function holdsLease(task: TaskRecord, fence: LeaseFence, now: Date): boolean {
  return (
    (task.state === 'leased' || task.state === 'cancel_requested') &&
    task.leaseHolder === fence.holder &&
    task.leaseEpoch === fence.epoch &&
    task.leaseExpiresAt !== null &&
    task.leaseExpiresAt.getTime() > now.getTime()
  );
}
