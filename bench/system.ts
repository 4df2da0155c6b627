import type pg from 'pg';
import type { DrainSpan } from './causeway-log';

/**
 * What the benchmark runs: Causeway, the raw SQL floor (L) or S, the contract floor (the
 * writes docs/rules.md requires, in raw SQL). All get the same workloads through this small
 * interface (the peers' harness has one adapter per peer, alike).
 */

/** The systems `--systems` can name: `floor` is L, `spec` is S. */
export const systemNames = ['causeway', 'floor', 'spec'] as const;
export type SystemName = (typeof systemNames)[number];

/**
 * Transition rows per workflow that the rules require (R24, the aggregation), for Causeway
 * and S alike: at submit, a workflow row plus one row per task; a finished one-step workflow
 * adds claim (task + workflow queued → running) and completion (task + workflow → succeeded);
 * a three-step one adds those for a, b and c plus `upstream_succeeded` (pending → queued) for
 * b and c.
 */
export const transitionsPerWorkflow = {
  job: { submitted: 2, finished: 6 },
  workflow: { submitted: 4, finished: 14 },
} as const;

/** `job`: one-step workflows (W1–W3); `workflow`: three-step a → b → c (W4). */
export type Mode = 'job' | 'workflow';

/** The payload of every benchmark workflow: its index, or the submit time for W3. */
export interface JobInput {
  readonly i?: number;
  /** Epoch ms (clock.ts `now()`) taken just before the submit call. */
  readonly t?: number;
  readonly warm?: boolean;
}

export interface CausewaySpec {
  readonly kind: 'causeway';
  /** Worker concurrency (`startWorker({ concurrency })`). */
  readonly concurrency: number;
  readonly claimBatchSize?: number;
  /** Claimed tasks held beyond the concurrency (`startWorker({ prefetch })`). */
  readonly prefetch?: number;
  readonly poolSize?: number;
  readonly pollIntervalMs?: number;
  readonly leaseMs?: number;
  /** The engine's `preparedStatements` (default on). */
  readonly preparedStatements?: boolean;
  /**
   * `--pgbouncer`: the port of a PgBouncer (transaction mode) on 127.0.0.1 that the engines
   * query through, LISTEN and migrations going to the server directly.
   */
  readonly poolerPort?: number;
  /**
   * w2k (`--keys`): the one-step workflow's task keyed (R50) over this many keys of limit 1.
   * Unset, no step declares a key, as a declared one sends its queue's claims the keyed way.
   */
  readonly keys?: number;
}

export interface RawSpec {
  readonly kind: 'raw';
  /** Rows claimed per statement. */
  readonly k: number;
  /** Claim loops, each on its own connection. */
  readonly concurrency: number;
  readonly notify: boolean;
  readonly idlePollMs: number;
}

/** S: L's knobs, over copies of Causeway's tables with every write docs/rules.md requires. */
export interface SpecFloorSpec extends Omit<RawSpec, 'kind'> {
  readonly kind: 'spec';
}

export type SystemSpec = CausewaySpec | RawSpec | SpecFloorSpec;

export interface Producer {
  submit(input: JobInput): Promise<void>;
  submitBatch(inputs: readonly JobInput[]): Promise<void>;
  /** w2d: a batch whose first steps run `delayMs` after acceptance (Causeway only). */
  submitBatchDelayed?(inputs: readonly JobInput[], delayMs: number): Promise<void>;
  /** w6: one workflow whose step starts `children` one-step workflows (Causeway only); its id. */
  submitFanOut?(children: number): Promise<string>;
  close(): Promise<void>;
}

/** Called by the handlers, first thing, so the worker process can count and time them. */
export interface WorkerHooks {
  onJob(input: JobInput): void;
  onStep(step: string): void;
  onWorkflowDone(): void;
}

export interface BenchWorker {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface Counts {
  /** Workflows (jobs) in the database. */
  readonly total: number;
  /** Finished successfully (for W4: whole workflows). */
  readonly done: number;
  /** Not finished yet. */
  readonly open: number;
  /** Finished, but not successfully. */
  readonly failed: number;
}

export interface Verification {
  readonly ok: boolean;
  readonly problems: readonly string[];
  readonly checks: Readonly<Record<string, number>>;
}

export interface System {
  readonly label: string;
  readonly version: string;
  readonly config: Readonly<Record<string, unknown>>;
  setup(url: string): Promise<void>;
  producer(url: string, connections: number, mode: Mode): Promise<Producer>;
  worker(url: string, mode: Mode, hooks: WorkerHooks): Promise<BenchWorker>;
  counts(pool: pg.Pool, mode: Mode): Promise<Counts>;
  /** Untimed checks after a run: `finished` of `workflows` ran to success, and nothing else. */
  verify(
    pool: pg.Pool,
    mode: Mode,
    expected: { workflows: number; finished: number },
  ): Promise<Verification>;
  /** The drain as the system's transition log tells it (Causeway), for like-for-like rates. */
  drainSpan?(pool: pg.Pool, mode: Mode): Promise<DrainSpan>;
  /** Rows that look like `finished` successful one-step workflows of the past (the w2h workload). */
  insertHistory(pool: pg.Pool, rows: number): Promise<void>;
}
