import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * A lease holder id (R7): host + pid + a boot id that is random per engine start, so two
 * processes on one host, or a restarted process, never renew each other's leases.
 */
export function newHolderId(): string {
  return `${hostname()}/${process.pid}/${randomBytes(4).toString('hex')}`;
}
