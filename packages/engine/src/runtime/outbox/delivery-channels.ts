import type { ErrorCategory } from '@causeway/workflow';

/** A message from the outbox, as a channel delivers it. */
export interface OutboxMessage {
  readonly id: string;
  readonly taskId: string;
  readonly workflowId: string;
  readonly channel: string;
  readonly payload: unknown;
  /** The outbox id: the receiver must treat a repeat with the same key as the same message. */
  readonly idempotencyKey: string;
  /** 1 for the first delivery attempt. */
  readonly attempt: number;
}

/** What a delivery attempt found out. */
export type DeliveryResult =
  /** Delivered. `confirmed`: the response is the effect's confirmation (the task succeeds);
   *  `awaiting_receipt`: the receiver will send a receipt later (recordReceipt). */
  | {
      readonly kind: 'delivered';
      readonly confirmation: 'confirmed' | 'awaiting_receipt';
      readonly statusCode?: number;
    }
  /** A transient failure: try again later (never before `retryAfterMs`). */
  | {
      readonly kind: 'retry';
      readonly category: ErrorCategory;
      readonly message: string;
      readonly retryAfterMs?: number;
      readonly statusCode?: number;
    }
  /** The receiver refused for good: the task gets a rejected receipt with this category. */
  | {
      readonly kind: 'failed';
      readonly category: ErrorCategory;
      readonly message: string;
      readonly statusCode?: number;
    };

/** A pluggable way to deliver outbox messages (R22). */
export interface Channel {
  readonly name: string;
  /** Give up and reject the task's receipt after this many delivery attempts. */
  readonly maxAttempts?: number;
  /** How long the task may wait in `awaiting_receipt` after the send was accepted. */
  readonly receiptTimeoutMs?: number;
  deliver(message: OutboxMessage, signal: AbortSignal): Promise<DeliveryResult>;
}

export interface HttpChannelOptions {
  readonly name: string;
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** `response`: a 2xx confirms the effect; `receipt`: a 2xx means accepted, a receipt follows. */
  readonly confirm: 'response' | 'receipt';
  readonly timeoutMs?: number;
  readonly maxAttempts?: number;
  readonly receiptTimeoutMs?: number;
}

/**
 * An HTTP channel (fetch): POSTs the payload as JSON with `Idempotency-Key: <outbox id>`,
 * the task id and the attempt. Status codes map to retry or failure by category (R17):
 * 408/timeouts → timeout, 429 → throttled (Retry-After honoured), 5xx → unavailable,
 * network errors → network, 401/403 → unauthorized, 404 → not_found, 409/422 → conflict,
 * other 4xx → invalid_argument.
 */
export function httpChannel(options: HttpChannelOptions): Channel {
  const timeoutMs = options.timeoutMs ?? 10_000;
  return {
    name: options.name,
    ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
    ...(options.receiptTimeoutMs === undefined
      ? {}
      : { receiptTimeoutMs: options.receiptTimeoutMs }),
    async deliver(message, signal) {
      let response: Response;
      try {
        response = await fetch(options.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'idempotency-key': message.idempotencyKey,
            'x-causeway-task-id': message.taskId,
            'x-causeway-attempt': String(message.attempt),
            ...options.headers,
          },
          body: JSON.stringify(message.payload),
          signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
        });
        await response.arrayBuffer(); // drain, so the connection is reused
      } catch (error) {
        const timedOut = error instanceof Error && error.name === 'TimeoutError';
        return {
          kind: 'retry',
          category: timedOut ? 'timeout' : 'network',
          message: timedOut ? `no answer within ${timeoutMs} ms` : String(error),
        };
      }
      const statusCode = response.status;
      if (statusCode >= 200 && statusCode < 300) {
        return {
          kind: 'delivered',
          confirmation: options.confirm === 'response' ? 'confirmed' : 'awaiting_receipt',
          statusCode,
        };
      }
      const text = `HTTP ${statusCode} from ${options.name}`;
      if (statusCode === 429) {
        const retryAfterMs = retryAfter(response.headers.get('retry-after'));
        return {
          kind: 'retry',
          category: 'throttled',
          message: text,
          statusCode,
          ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        };
      }
      if (statusCode === 408)
        return { kind: 'retry', category: 'timeout', message: text, statusCode };
      if (statusCode >= 500) {
        const retryAfterMs = retryAfter(response.headers.get('retry-after'));
        return {
          kind: 'retry',
          category: 'unavailable',
          message: text,
          statusCode,
          ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        };
      }
      const category: ErrorCategory =
        statusCode === 401 || statusCode === 403
          ? 'unauthorized'
          : statusCode === 404
            ? 'not_found'
            : statusCode === 409 || statusCode === 422
              ? 'conflict'
              : 'invalid_argument';
      return { kind: 'failed', category, message: text, statusCode };
    },
  };
}

/** Retry-After in seconds or as an HTTP date; undefined when absent or unreadable. */
function retryAfter(header: string | null): number | undefined {
  if (header === null) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1_000);
  const date = Date.parse(header);
  // An HTTP date is the receiver's clock; it only bounds the wait, never a comparison we store.
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
