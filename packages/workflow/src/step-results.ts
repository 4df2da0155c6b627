/**
 * What a step's `run` may return besides a plain output: a request to wait for a receipt
 * (R23) or a message for the transactional outbox (R22). Plain frozen data, tagged by a
 * symbol so that no user output can be mistaken for one.
 */
const stepResultTag: unique symbol = Symbol.for('causeway.step-result');

export interface AwaitReceipt {
  readonly [stepResultTag]: 'await_receipt';
  readonly kind: 'await_receipt';
  /** The external system's id for the accepted submission. */
  readonly receiptId: string;
  /** How long to wait for the receipt before `receipt_timeout`. */
  readonly timeoutMs: number;
}

export interface SendRequest {
  readonly [stepResultTag]: 'send';
  readonly kind: 'send';
  readonly channel: string;
  readonly payload: unknown;
}

/** The step's effect was accepted; release the lease and wait for the receipt. */
export function awaitReceipt(options: { receiptId: string; timeoutMs: number }): AwaitReceipt {
  if (options.receiptId.length === 0) throw new TypeError('awaitReceipt: receiptId is empty');
  if (!Number.isInteger(options.timeoutMs) || options.timeoutMs <= 0) {
    throw new RangeError(
      `awaitReceipt: timeoutMs must be a positive integer, got ${options.timeoutMs}`,
    );
  }
  return Object.freeze({
    [stepResultTag]: 'await_receipt' as const,
    kind: 'await_receipt' as const,
    receiptId: options.receiptId,
    timeoutMs: options.timeoutMs,
  });
}

/** Send `payload` on `channel` through the outbox, after the step's edge commits. */
export function send(channel: string, payload: unknown): SendRequest {
  if (channel.length === 0) throw new TypeError('send: channel is empty');
  return Object.freeze({
    [stepResultTag]: 'send' as const,
    kind: 'send' as const,
    channel,
    payload,
  });
}

export function isAwaitReceipt(value: unknown): value is AwaitReceipt {
  return isTagged(value, 'await_receipt');
}

export function isSendRequest(value: unknown): value is SendRequest {
  return isTagged(value, 'send');
}

function isTagged(value: unknown, tag: string): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[stepResultTag] === tag
  );
}
