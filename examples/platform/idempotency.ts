import type { Endpoint } from './endpoints';

/** The answer given to the request that performed an effect; replayed for the same key. */
export interface StoredResponse {
  readonly status: number;
  readonly body: unknown;
}

export type IdempotencyLookup =
  | { readonly kind: 'new' }
  | { readonly kind: 'replay'; readonly response: StoredResponse }
  | { readonly kind: 'conflict' };

interface Entry {
  readonly fingerprint: string;
  readonly response: StoredResponse;
}

/**
 * Remembers `Idempotency-Key`s, scoped per endpoint: the same key with the same body replays
 * the original answer; with another body it is a conflict (422). Only answers of performed
 * effects are stored, so a request refused by a fault can be retried with its key.
 */
export class IdempotencyStore {
  readonly #entries = new Map<string, Entry>();

  lookup(endpoint: Endpoint, key: string, body: unknown): IdempotencyLookup {
    const entry = this.#entries.get(scoped(endpoint, key));
    if (entry === undefined) return { kind: 'new' };
    if (entry.fingerprint !== fingerprint(body)) return { kind: 'conflict' };
    return { kind: 'replay', response: entry.response };
  }

  remember(endpoint: Endpoint, key: string, body: unknown, response: StoredResponse): void {
    this.#entries.set(scoped(endpoint, key), { fingerprint: fingerprint(body), response });
  }

  get size(): number {
    return this.#entries.size;
  }

  clear(): void {
    this.#entries.clear();
  }
}

function scoped(endpoint: Endpoint, key: string): string {
  return `${endpoint}\u0000${key}`;
}

/** Canonical JSON (object keys sorted), so that key order does not make a body "different". */
export function fingerprint(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => {
    if (inner === null || typeof inner !== 'object' || Array.isArray(inner)) return inner;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(inner).sort()) {
      sorted[key] = (inner as Record<string, unknown>)[key];
    }
    return sorted;
  });
}
