import { transitionPartitionsEnsure } from '../../db/retention/partitions-ensure';
import type { EngineContext } from '../context';

/** Days of log partitions kept made ahead of database time. */
export const partitionDaysAhead = 7;
const upkeepIntervalMs = 60 * 60 * 1000;

/**
 * Keeps the log's day partitions made a week ahead, from the sweeper (which runs anyway), never
 * from a claim or a settle: once when the sweeper starts, then hourly. Several engines may do
 * it at once; the database function lets one through and the others return at once.
 */
export class PartitionUpkeep {
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly context: EngineContext) {}

  start(): void {
    const run = () =>
      void transitionPartitionsEnsure(this.context.db, partitionDaysAhead).catch((error: unknown) =>
        this.context.logger.warn({ err: error }, 'making log partitions failed; will retry'),
      );
    run();
    this.timer = setInterval(run, upkeepIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
  }
}
