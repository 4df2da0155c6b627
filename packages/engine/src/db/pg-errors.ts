/**
 * PostgreSQL SQLSTATEs worth retrying (a table, not scattered checks): serialization and
 * deadlock failures, and connection-level trouble that a new attempt may not see.
 */
const retryableSqlStates: ReadonlySet<string> = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '55P03', // lock_not_available
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '08000', // connection_exception
  '08003', // connection_does_not_exist
  '08006', // connection_failure
  '53300', // too_many_connections
]);

const retryableNodeCodes: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
]);

export function isRetryableDatabaseError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (retryableSqlStates.has(code) || retryableNodeCodes.has(code)))
    return true;
  const message = (error as { message?: unknown }).message;
  return typeof message === 'string' && /Connection terminated|connection timeout/i.test(message);
}

/** A unique constraint refused a row (23505), e.g. an idempotency key stored concurrently. */
export function isUniqueViolation(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505'
  );
}
