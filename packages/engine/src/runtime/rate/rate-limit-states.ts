import type { RateLimit } from '@causeway/workflow';
import type { Db } from '../../db/database';
import {
  type RateKeyState,
  type RateLimitState,
  rateLimitStateList,
} from '../../db/rate/rate-limit-loads';
import { EngineError } from '../../errors';

export type { RateKeyState, RateLimitState };

/** What `rateLimits` shows. */
export interface RateLimitsRequest {
  /** Only the limit of this name (none when the engine declares no such limit). */
  readonly name?: string;
  /** The busiest keys shown per limit: 1 to 100, default 10. */
  readonly keysPerLimit?: number;
}

/** The engine's rate limit reads (R51). */
export interface RateLimitOperations {
  /**
   * Each rate limit this engine declares, in declaration order, with its spend within the
   * current period on the database clock, its spent or paused keys and the busiest of them.
   */
  rateLimits(request?: RateLimitsRequest): Promise<RateLimitState[]>;
  /** The rate limits this engine declares (its `rateLimits` option). */
  readonly declaredRateLimits: readonly RateLimit[];
}

export function rateLimitOperationsOf(db: Db, declared: readonly RateLimit[]): RateLimitOperations {
  return {
    declaredRateLimits: declared,
    rateLimits: async (request = {}) => {
      const { name, keysPerLimit } = checkRequest(request);
      const limits = name === undefined ? declared : declared.filter((l) => l.name === name);
      return rateLimitStateList(db, limits, keysPerLimit);
    },
  };
}

function checkRequest(request: unknown): { name: string | undefined; keysPerLimit: number } {
  if (typeof request !== 'object' || request === null) {
    throw new EngineError('invalid_request', 'rateLimits takes { name?, keysPerLimit? }');
  }
  const { name, keysPerLimit } = request as Record<string, unknown>;
  if (name !== undefined && name !== null && typeof name !== 'string') {
    throw new EngineError('invalid_request', 'name must be a string');
  }
  if (keysPerLimit === undefined || keysPerLimit === null) {
    return { name: name ?? undefined, keysPerLimit: 10 };
  }
  if (
    typeof keysPerLimit !== 'number' ||
    !Number.isInteger(keysPerLimit) ||
    keysPerLimit < 1 ||
    keysPerLimit > 100
  ) {
    throw new EngineError('invalid_request', 'keysPerLimit must be an integer from 1 to 100');
  }
  return { name: name ?? undefined, keysPerLimit };
}
