/**
 * PostgreSQL SQLSTATEs of a server that is away or going away (a table, not scattered
 * checks): shutting down, starting up, the connection lost, or no connection to be had.
 */
const unavailableSqlStates: ReadonlySet<string> = new Set([
  '57P01', // admin_shutdown (also pg_terminate_backend)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, shutting down)
  '08000', // connection_exception
  '08003', // connection_does_not_exist
  '08006', // connection_failure
  '53300', // too_many_connections
]);

/** Conflicts that the same statement may not meet again: serialization, deadlock, lock. */
const conflictSqlStates: ReadonlySet<string> = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '55P03', // lock_not_available
]);

const unavailableNodeCodes: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
]);

/** The database cannot be reached now (down, restarting, the connection cut): try again later. */
export function isDatabaseUnavailableError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (
    typeof code === 'string' &&
    (unavailableSqlStates.has(code) || unavailableNodeCodes.has(code))
  )
    return true;
  const message = (error as { message?: unknown }).message;
  return (
    typeof message === 'string' &&
    /Connection terminated|connection timeout|timeout exceeded when trying to connect|connection error and is not queryable/i.test(
      message,
    )
  );
}

/** A serialization failure, deadlock or lock timeout: the same work may pass on another try. */
export function isConflictError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && conflictSqlStates.has(code);
}

/**
 * A one-statement path's self-check failed (`causeway_written_as_decided`, migration 0009): the
 * statement wrote other than it decided and undid everything. Raised as a serialization
 * failure; told apart by the function named in the error's context.
 */
export function isSelfCheckFailure(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, where } = error as { code?: unknown; where?: unknown };
  return (
    code === '40001' && typeof where === 'string' && where.includes('causeway_written_as_decided')
  );
}

export function isRetryableDatabaseError(error: unknown): boolean {
  return isDatabaseUnavailableError(error) || isConflictError(error);
}

/** A unique constraint refused a row (23505), e.g. an idempotency key stored concurrently. */
export function isUniqueViolation(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505'
  );
}

/** undefined_function: e.g. a session function the server connection does not have. */
export function isUndefinedFunction(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '42883'
  );
}
