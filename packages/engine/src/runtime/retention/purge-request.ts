import { EngineError } from '../../errors';
import { requesterActor } from '../operations/operations';

/** A retention run's request: who, why, and what age of finished work goes. */
export interface PurgeFinishedRequest {
  /** Workflows finished (terminal) at least this long ago, in ms of database time, are removed. */
  readonly olderThanMs: number;
  readonly operator: string;
  /** Why, in the operator's words (1 to 1000 characters): kept on the run's record. */
  readonly reason: string;
  /** Count what would go and write nothing. */
  readonly dryRun?: boolean;
  /** Workflows deleted per transaction. Default 500. */
  readonly batchSize?: number;
}

export interface ValidPurgeRequest {
  readonly olderThanMs: number;
  readonly operator: string;
  readonly reason: string;
  readonly dryRun: boolean;
  readonly batchSize: number;
}

/** Checks a request before anything is read or written; bad input is `invalid_request`. */
export function validPurgeRequest(request: PurgeFinishedRequest): ValidPurgeRequest {
  const { olderThanMs, reason, dryRun = false, batchSize = 500 } = request;
  if (typeof olderThanMs !== 'number' || !Number.isSafeInteger(olderThanMs) || olderThanMs < 0) {
    throw new EngineError(
      'invalid_request',
      `olderThanMs must be a whole number of milliseconds, at least 0 (got ${String(olderThanMs)})`,
      { field: 'olderThanMs' },
    );
  }
  if (typeof request.operator !== 'string') {
    throw new EngineError('invalid_request', 'a retention run needs an operator', {
      field: 'operator',
    });
  }
  const actor = requesterActor({ operator: request.operator });
  const trimmed = typeof reason === 'string' ? reason.trim() : '';
  if (trimmed.length === 0 || trimmed.length > 1000) {
    throw new EngineError(
      'invalid_request',
      'a retention run needs a reason of 1 to 1000 characters',
      {
        field: 'reason',
      },
    );
  }
  if (!Number.isSafeInteger(batchSize) || batchSize < 1 || batchSize > 10_000) {
    throw new EngineError('invalid_request', 'batchSize must be a whole number from 1 to 10000', {
      field: 'batchSize',
    });
  }
  if (typeof dryRun !== 'boolean') {
    throw new EngineError('invalid_request', 'dryRun must be true or false', { field: 'dryRun' });
  }
  return {
    olderThanMs,
    operator: actor.name ?? request.operator,
    reason: trimmed,
    dryRun,
    batchSize,
  };
}
