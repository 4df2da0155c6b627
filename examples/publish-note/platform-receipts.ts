/**
 * The platform's review receipts, recorded through the engine (R23): `pnpm start` and the
 * tests that run publish-note against the platform pass this as the platform's callback.
 */
import type { Engine } from '@causeway/engine';
import type { Receipt } from '@causeway/example-platform/server.ts';
import type { ErrorCategory } from '@causeway/workflow';

/** A callback for `startPlatform`; `engine()` is read per receipt (the engine may start later). */
export function recordPlatformReceipts(engine: () => Engine | undefined) {
  return async (receipt: Receipt): Promise<void> => {
    const current = engine();
    if (current === undefined || receipt.reference === null) return;
    const answer = await current.recordReceipt(
      receipt.reference,
      receipt.outcome === 'ok'
        ? { ok: true }
        : {
            ok: false,
            category: (receipt.category ?? 'invalid_argument') as ErrorCategory,
            message: receipt.message ?? 'rejected',
          },
    );
    // A receipt that beat its own edge into awaiting_receipt: make the platform deliver again.
    if (!answer.changed && answer.state === 'leased')
      throw new Error('task is not awaiting its receipt yet');
  };
}
