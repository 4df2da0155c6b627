import type { WorkflowKey } from '@causeway/engine';
import { ApiError } from './errors';

const version = 'w1';
const isoMicros = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Opaque cursors over workflows: a keyset position (created_at to the microsecond, id), so a
 * page boundary never moves when rows are inserted meanwhile.
 */
export function encodeWorkflowCursor(key: WorkflowKey): string {
  return Buffer.from(JSON.stringify([version, key.createdAt, key.id]), 'utf8').toString(
    'base64url',
  );
}

export function decodeWorkflowCursor(cursor: string): WorkflowKey {
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
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 3 ||
    parsed[0] !== version ||
    typeof parsed[1] !== 'string' ||
    !isoMicros.test(parsed[1]) ||
    Number.isNaN(Date.parse(parsed[1])) ||
    typeof parsed[2] !== 'string' ||
    !uuid.test(parsed[2])
  ) {
    throw invalid();
  }
  return { createdAt: parsed[1], id: parsed[2] };
}
