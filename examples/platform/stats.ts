import { type Endpoint, endpoints } from './endpoints';
import type { FaultKind } from './modes';
import type { DeliveryRecord, ReceiptDispatcher } from './receipts';
import type { PlatformRecords, ReviewRecord } from './records';

/** One request as the platform saw it. */
export interface RequestRecord {
  /** 1, 2, 3… in arrival order of answers (hung requests count when they hang). */
  readonly seq: number;
  readonly endpoint: Endpoint | 'unmatched';
  readonly method: string;
  readonly path: string;
  /** The status answered, or 'hung' for a request that was never answered. */
  readonly status: number | 'hung';
  /** The fault applied; null when the request ended before one was chosen. */
  readonly fault: FaultKind | null;
  readonly idempotencyKey: string | null;
  /** True when the answer was replayed from the idempotency store. */
  readonly replayed: boolean;
  /** Epoch milliseconds. */
  readonly receivedAt: number;
  readonly answeredAt: number | null;
}

export type RequestCounts = { readonly [E in Endpoint | 'unmatched']: Record<string, number> };

export interface PostSummary {
  readonly id: string;
  readonly acceptanceId: string;
  readonly noteId: string;
  readonly version: number;
  readonly title: string;
  readonly status: 'pending' | 'published' | 'rejected';
  readonly idempotencyKey: string | null;
}

export interface AssetSummary {
  readonly id: string;
  readonly acceptanceId: string;
  readonly noteId: string;
  readonly name: string;
  readonly size: number;
  readonly idempotencyKey: string | null;
}

/** Effects really performed, and every request answered, since start or the last reset. */
export interface PlatformStats {
  readonly assetsUploaded: number;
  readonly postsPublished: number;
  readonly postsRejected: number;
  /** Posts accepted and not yet settled. */
  readonly postsPending: number;
  readonly reviewsRequested: number;
  /** Receipts acknowledged by their receiver (a duplicate delivery counts twice). */
  readonly receiptsDelivered: number;
  /** Delivery attempts that failed (each one is retried with backoff). */
  readonly receiptDeliveryFailures: number;
  readonly lastReceiptDeliveryError: string | null;
  /** Settlements not yet due or held, plus deliveries still being attempted. */
  readonly receiptsPending: number;
  /** Answers replayed for a repeated Idempotency-Key (no effect performed). */
  readonly idempotentReplays: number;
  /** requests[endpoint][status] → count; status is a code like '201' or 'hung'. */
  readonly requests: RequestCounts;
  /** Requests received and not answered yet: slow ones being held back, hung ones. */
  readonly requestsOpen: number;
  readonly posts: ReadonlyArray<PostSummary>;
  readonly assets: ReadonlyArray<AssetSummary>;
  readonly reviews: ReadonlyArray<ReviewRecord>;
  readonly receipts: ReadonlyArray<DeliveryRecord>;
  /** The latest requests (at most `requestLogLimit`), oldest first. */
  readonly log: ReadonlyArray<RequestRecord>;
}

export const requestLogLimit = 10_000;

/** The request log and its per-endpoint, per-status counts. */
export class RequestLog {
  #entries: RequestRecord[] = [];
  #counts = emptyCounts();
  #replays = 0;
  #seq = 0;

  record(entry: Omit<RequestRecord, 'seq'>): RequestRecord {
    this.#seq += 1;
    const record: RequestRecord = { seq: this.#seq, ...entry };
    this.#entries.push(record);
    if (this.#entries.length > requestLogLimit) this.#entries.shift();
    const byStatus = this.#counts[record.endpoint];
    const status = String(record.status);
    byStatus[status] = (byStatus[status] ?? 0) + 1;
    if (record.replayed) this.#replays += 1;
    return record;
  }

  get entries(): ReadonlyArray<RequestRecord> {
    return [...this.#entries];
  }

  get counts(): RequestCounts {
    return Object.fromEntries(
      Object.entries(this.#counts).map(([endpoint, byStatus]) => [endpoint, { ...byStatus }]),
    ) as RequestCounts;
  }

  get replays(): number {
    return this.#replays;
  }

  clear(): void {
    this.#entries = [];
    this.#counts = emptyCounts();
    this.#replays = 0;
  }
}

function emptyCounts(): { [E in Endpoint | 'unmatched']: Record<string, number> } {
  const counts = { unmatched: {} } as { [E in Endpoint | 'unmatched']: Record<string, number> };
  for (const endpoint of endpoints) counts[endpoint] = {};
  return counts;
}

/** A snapshot: later activity does not change it. */
export function buildStats(
  records: PlatformRecords,
  log: RequestLog,
  receipts: ReceiptDispatcher,
  requestsOpen: number,
): PlatformStats {
  const posts = records.posts();
  const delivered = receipts.delivered;
  return {
    assetsUploaded: records.assets().length,
    postsPublished: posts.filter((post) => post.status === 'published').length,
    postsRejected: posts.filter((post) => post.status === 'rejected').length,
    postsPending: posts.filter((post) => post.status === 'pending').length,
    reviewsRequested: records.reviews().length,
    receiptsDelivered: delivered.length,
    receiptDeliveryFailures: receipts.failedAttempts,
    lastReceiptDeliveryError: receipts.lastError,
    receiptsPending: receipts.pending,
    idempotentReplays: log.replays,
    requests: log.counts,
    requestsOpen,
    posts: posts.map(({ id, acceptanceId, noteId, version, title, status, idempotencyKey }) => ({
      id,
      acceptanceId,
      noteId,
      version,
      title,
      status,
      idempotencyKey,
    })),
    assets: records.assets().map(({ id, acceptanceId, noteId, name, size, idempotencyKey }) => ({
      id,
      acceptanceId,
      noteId,
      name,
      size,
      idempotencyKey,
    })),
    reviews: records.reviews(),
    receipts: delivered,
    log: log.entries,
  };
}
