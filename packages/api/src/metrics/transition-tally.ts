import type { Logger, TransitionEdge, TransitionLogReader } from '@causeway/engine';
import type { MetricSet } from './metrics-registry';

export interface TransitionTallyOptions {
  /**
   * Reads the log this often; a round reads batches until one comes back short. A row counts
   * once no smaller id can still commit, so it shows a round or two after it was written.
   * Default 1 s.
   */
  readonly intervalMs?: number;
  /** Rows per read: each statement stays bounded however far behind the tally is. Default 1,000. */
  readonly batchSize?: number;
}

/**
 * The log counters: tails the transition log from its end at start, in the background, and
 * counts every row once into the edge counters and the time-in-state histograms. Cluster-wide:
 * the log holds every engine's edges, not only this process's. A scrape never waits for it;
 * `counted` says how far it got.
 */
export class TransitionTally {
  private readonly intervalMs: number;
  private readonly batchSize: number;
  private timer: NodeJS.Timeout | null = null;
  private reading: Promise<void> | null = null;
  private failures = 0;
  private closed = false;
  private startId = 0n;

  constructor(
    private readonly reader: TransitionLogReader<TransitionEdge>,
    private readonly metrics: MetricSet,
    private readonly logger: Logger,
    options: TransitionTallyOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? 1_000;
    this.batchSize = options.batchSize ?? 1_000;
  }

  /** Finds the log's end (rows before it are not counted), then reads on its own. */
  async start(): Promise<void> {
    await this.reader.start();
    this.startId = this.reader.position;
    this.metrics.logStart.set(Number(this.startId));
    this.metrics.logCounted.set(Number(this.startId));
    this.schedule(0);
  }

  /** The id up to which every log row is counted. */
  get counted(): bigint {
    return this.reader.position;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    await this.reading;
  }

  private schedule(delayMs: number): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.reading = this.readRound().finally(() => {
        this.reading = null;
      });
    }, delayMs);
    this.timer.unref();
  }

  /** Reads batches until one comes back short, then waits for the next round. */
  private async readRound(): Promise<void> {
    let next = this.intervalMs;
    try {
      for (;;) {
        const rows = await this.reader.read(this.batchSize);
        for (const row of rows) this.count(row);
        this.metrics.logCounted.set(Number(this.reader.position));
        if (rows.length < this.batchSize || this.closed) break;
      }
      this.failures = 0;
    } catch (error) {
      this.failures += 1;
      next = Math.min(this.intervalMs * 2 ** this.failures, 30_000);
      if (!this.closed) {
        this.logger.warn({ err: error }, 'reading the transition log for metrics failed; retrying');
      }
    }
    this.schedule(next);
  }

  private count(row: TransitionEdge): void {
    const task = row.kind === 'task';
    const transitions = task ? this.metrics.taskTransitions : this.metrics.workflowTransitions;
    transitions.inc({ from: row.from ?? 'none', to: row.to, reason: row.reason });
    if (row.from === null || row.secondsInState === null) return;
    const timeInState = task ? this.metrics.taskTimeInState : this.metrics.workflowTimeInState;
    timeInState.observe({ state: row.from, reason: row.reason }, row.secondsInState);
  }
}
