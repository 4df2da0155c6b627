import { setTimeout as sleep } from 'node:timers/promises';
import type { ReceiptMode } from './receipt-modes';
import type { Receipt, Verdict } from './records';

/**
 * Where receipts go: a URL (POSTed JSON, `Idempotency-Key: receipt:<receiptId>`, any 2xx
 * counts as delivered) or a function (resolving counts as delivered, throwing as failed).
 */
export type ReceiptCallback = string | ((receipt: Receipt) => unknown);

/** A delivery that the receiver acknowledged. */
export interface DeliveryRecord {
  readonly receiptId: string;
  readonly acceptanceId: string;
  readonly outcome: Receipt['outcome'];
  readonly target: 'url' | 'function';
  /** Attempts this delivery took (1 when the first one was acknowledged). */
  readonly attempts: number;
  readonly deliveredAt: string;
}

/** Failed deliveries are retried with exponential backoff, like a webhook sender. */
export const receiptDeliveryPolicy = Object.freeze({
  maxAttempts: 6,
  initialDelayMs: 50,
  requestTimeoutMs: 5_000,
});

export interface ReceiptDispatcherDeps {
  /** Settles the submission in the records; null when it is gone or already settled. */
  settle(acceptanceId: string, verdict: Verdict): Receipt | null;
  /** The configured callback, read at delivery time. */
  callback(): ReceiptCallback | null;
}

interface PendingSettlement {
  readonly callbackUrl: string | null;
  readonly verdict: Verdict;
  readonly deliveries: number;
  readonly timer: NodeJS.Timeout | null;
}

/** Settles accepted submissions later and delivers their receipts. */
export class ReceiptDispatcher {
  readonly #deps: ReceiptDispatcherDeps;
  readonly #pending = new Map<string, PendingSettlement>();
  #delivered: DeliveryRecord[] = [];
  #failedAttempts = 0;
  #lastError: string | null = null;
  #inFlight = 0;
  #abort = new AbortController();

  constructor(deps: ReceiptDispatcherDeps) {
    this.#deps = deps;
  }

  /** Plans the settlement of an accepted submission per `mode`. */
  schedule(acceptanceId: string, mode: ReceiptMode, callbackUrl: string | null): void {
    const timer =
      mode.hold === true
        ? null
        : setTimeout(() => void this.#settle(acceptanceId), mode.delayMs ?? 20);
    this.#pending.set(acceptanceId, {
      callbackUrl,
      verdict: {
        outcome: mode.outcome ?? 'ok',
        ...(mode.category === undefined ? {} : { category: mode.category }),
        ...(mode.message === undefined ? {} : { message: mode.message }),
      },
      deliveries: mode.deliveries ?? 1,
      timer,
    });
  }

  /** Settles a pending submission now (held or not yet due) and resolves after delivery. */
  async settleNow(acceptanceId: string, verdict?: Verdict): Promise<Receipt> {
    if (!this.#pending.has(acceptanceId)) {
      throw new Error(`platform: no pending submission with acceptance id ${acceptanceId}`);
    }
    const receipt = await this.#settle(acceptanceId, verdict);
    if (receipt === null) throw new Error(`platform: submission ${acceptanceId} is gone`);
    return receipt;
  }

  /** Submissions waiting to settle plus deliveries still being attempted. */
  get pending(): number {
    return this.#pending.size + this.#inFlight;
  }

  get delivered(): ReadonlyArray<DeliveryRecord> {
    return [...this.#delivered];
  }

  get failedAttempts(): number {
    return this.#failedAttempts;
  }

  get lastError(): string | null {
    return this.#lastError;
  }

  /** Forgets everything: timers cleared, deliveries in progress abandoned. */
  clear(): void {
    this.#abort.abort();
    this.#abort = new AbortController();
    for (const entry of this.#pending.values()) {
      if (entry.timer !== null) clearTimeout(entry.timer);
    }
    this.#pending.clear();
    this.#delivered = [];
    this.#failedAttempts = 0;
    this.#lastError = null;
  }

  async #settle(acceptanceId: string, override?: Verdict): Promise<Receipt | null> {
    const entry = this.#pending.get(acceptanceId);
    if (entry === undefined) return null;
    this.#pending.delete(acceptanceId);
    if (entry.timer !== null) clearTimeout(entry.timer);
    const receipt = this.#deps.settle(acceptanceId, override ?? entry.verdict);
    if (receipt === null) return null;
    const target = entry.callbackUrl ?? this.#deps.callback();
    if (target !== null) await this.#deliver(receipt, target, entry.deliveries);
    return receipt;
  }

  async #deliver(receipt: Receipt, target: ReceiptCallback, times: number): Promise<void> {
    const signal = this.#abort.signal;
    this.#inFlight += 1;
    try {
      for (let delivery = 0; delivery < times; delivery += 1) {
        for (let attempt = 1; !signal.aborted; attempt += 1) {
          try {
            await send(target, receipt, signal);
          } catch (error) {
            if (signal.aborted) return;
            this.#failedAttempts += 1;
            this.#lastError = error instanceof Error ? error.message : String(error);
            if (attempt >= receiptDeliveryPolicy.maxAttempts) break;
            const backoff = receiptDeliveryPolicy.initialDelayMs * 2 ** (attempt - 1);
            await sleep(backoff, undefined, { signal }).catch(() => undefined);
            continue;
          }
          if (signal.aborted) return;
          this.#delivered.push({
            receiptId: receipt.receiptId,
            acceptanceId: receipt.acceptanceId,
            outcome: receipt.outcome,
            target: typeof target === 'string' ? 'url' : 'function',
            attempts: attempt,
            deliveredAt: new Date().toISOString(),
          });
          break;
        }
      }
    } finally {
      this.#inFlight -= 1;
    }
  }
}

async function send(target: ReceiptCallback, receipt: Receipt, signal: AbortSignal): Promise<void> {
  if (typeof target === 'function') {
    await target(receipt);
    return;
  }
  const response = await fetch(target, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'idempotency-key': `receipt:${receipt.receiptId}`,
    },
    body: JSON.stringify(receipt),
    signal: AbortSignal.any([signal, AbortSignal.timeout(receiptDeliveryPolicy.requestTimeoutMs)]),
  });
  await response.arrayBuffer().catch(() => undefined);
  if (!response.ok) throw new Error(`receipt callback ${target} answered ${response.status}`);
}
