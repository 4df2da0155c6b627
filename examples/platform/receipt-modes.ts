/** How the platform settles an accepted request later: the receipt it calls back with. */
export const receiptOutcomes = ['ok', 'rejected'] as const;
export type ReceiptOutcome = (typeof receiptOutcomes)[number];

/**
 * Accept now, settle later and call back with a receipt. Reviews always work this way
 * (with the defaults below); posts do when a receipt mode applies to them.
 */
export interface ReceiptMode {
  /** Default 'ok'. */
  readonly outcome?: ReceiptOutcome;
  /** Error category of a rejection (default 'invalid_argument'). */
  readonly category?: string;
  /** Message of a rejection (default 'rejected by the platform'). */
  readonly message?: string;
  /** Delay between acceptance and settlement (default 20 ms). */
  readonly delayMs?: number;
  /** Stay pending until `platform.settle(acceptanceId)` is called. */
  readonly hold?: boolean;
  /** How many times the receipt is delivered (default 1; 2 simulates a duplicate). */
  readonly deliveries?: number;
}
