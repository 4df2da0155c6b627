import type { ChildKey } from '@causeway/engine';
import { ApiError } from './errors';

const version = 'c1';
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Opaque cursors over a workflow's children (`Workflow.children`): a keyset position in the
 * parent's (step, index, id) order, so a page boundary never moves when children are added.
 * A `workflows` cursor is refused here, and a children cursor there.
 */
export function encodeChildCursor(key: ChildKey): string {
  return Buffer.from(JSON.stringify([version, key.step, key.index, key.id]), 'utf8').toString(
    'base64url',
  );
}

export function decodeChildCursor(cursor: string): ChildKey {
  const invalid = () =>
    new ApiError('BAD_USER_INPUT', '`after` is not a cursor of `children` this API gave out', {
      argument: 'after',
    });
  if (cursor.length > 400 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 4 ||
    parsed[0] !== version ||
    typeof parsed[1] !== 'string' ||
    parsed[1].length > 200 ||
    !Number.isInteger(parsed[2]) ||
    parsed[2] < 0 ||
    parsed[2] > 2_147_483_647 ||
    typeof parsed[3] !== 'string' ||
    !uuid.test(parsed[3])
  ) {
    throw invalid();
  }
  return { step: parsed[1], index: parsed[2], id: parsed[3] };
}
