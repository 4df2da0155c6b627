import { ApiError } from './errors';

interface Entry {
  readonly fingerprint: string;
  readonly answer: Promise<unknown>;
  readonly expiresAt: number;
}

/**
 * Remembers operator mutations by (operator, clientMutationId): a repeat with the same
 * arguments (a double click, a client retry) gets the first answer and runs nothing; the same
 * id with other arguments is a CONFLICT. Per API process; across processes the engine's own
 * idempotency holds (cancel answers its state, a repeated replay is recognised in the log).
 */
export class MutationMemo {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly ttlMs = 15 * 60_000,
    private readonly maxEntries = 10_000,
  ) {}

  run<T>(
    operator: string,
    clientMutationId: string | null | undefined,
    /** The request, made only when there is a clientMutationId to remember it by. */
    requestFingerprint: () => string,
    action: () => Promise<T>,
  ): Promise<T> {
    if (clientMutationId === null || clientMutationId === undefined) return action();
    if (clientMutationId.length === 0 || clientMutationId.length > 200) {
      throw new ApiError('BAD_USER_INPUT', 'clientMutationId must be 1 to 200 characters', {
        argument: 'clientMutationId',
      });
    }
    const fingerprint = requestFingerprint();
    const now = Date.now();
    const key = `${operator}\u0000${clientMutationId}`;
    const existing = this.entries.get(key);
    if (existing !== undefined && existing.expiresAt > now) {
      if (existing.fingerprint !== fingerprint) {
        throw new ApiError(
          'CONFLICT',
          'this clientMutationId was already used for a different request',
          { argument: 'clientMutationId' },
        );
      }
      return existing.answer as Promise<T>;
    }
    this.evict(now);
    const answer = action();
    const entry = { fingerprint, answer, expiresAt: now + this.ttlMs };
    this.entries.set(key, entry);
    // A failed attempt is not an answer to remember: the client may retry it.
    answer.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return answer;
  }

  private evict(now: number): void {
    for (const [key, entry] of this.entries) {
      if (entry.expiresAt <= now || this.entries.size >= this.maxEntries) this.entries.delete(key);
      else break;
    }
  }
}
