import type { WorkflowKey, WorkflowOrder } from '@causeway/engine';
import { ApiError } from './errors';

/** Cursors carry their order; `w1` cursors (before there was a choice) are oldest first. */
const version = 'w2';
const legacyOldestFirst = 'w1';
const orders: readonly WorkflowOrder[] = ['newest_first', 'oldest_first'];
const isoMicros = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Opaque cursors over workflows: a keyset position (created_at to the microsecond, id) and the
 * order it was read in, so a page boundary never moves when rows are inserted meanwhile, and a
 * cursor of one order is refused by the other (it would start a page in the wrong place).
 */
export function encodeWorkflowCursor(key: WorkflowKey, order: WorkflowOrder): string {
  return Buffer.from(JSON.stringify([version, order, key.createdAt, key.id]), 'utf8').toString(
    'base64url',
  );
}

export function decodeWorkflowCursor(cursor: string, order: WorkflowOrder): WorkflowKey {
  const invalid = () =>
    new ApiError('BAD_USER_INPUT', '`after` is not a cursor this API gave out', {
      argument: 'after',
    });
  if (cursor.length > 200 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (Array.isArray(parsed) && parsed.length === 3 && parsed[0] === legacyOldestFirst) {
    parsed = [version, 'oldest_first', parsed[1], parsed[2]];
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 4 ||
    parsed[0] !== version ||
    !orders.includes(parsed[1]) ||
    typeof parsed[2] !== 'string' ||
    !isoMicros.test(parsed[2]) ||
    Number.isNaN(Date.parse(parsed[2])) ||
    typeof parsed[3] !== 'string' ||
    !uuid.test(parsed[3])
  ) {
    throw invalid();
  }
  if (parsed[1] !== order) {
    throw new ApiError(
      'BAD_USER_INPUT',
      `\`after\` is a cursor of the ${parsed[1].toUpperCase()} order, not of ${order.toUpperCase()}: page with the order it came from`,
      { argument: 'after' },
    );
  }
  return { createdAt: parsed[2], id: parsed[3] };
}
