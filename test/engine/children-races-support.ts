/**
 * What the children races share (children-races.test.ts): a child workflow whose step does
 * what its input's plan says and waits at a gate the test opens, a parent whose one step
 * starts the children its input lists, two real engines with workers on one database, and
 * the reads and checks of a finished tree against the contract (model-children-contract.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Engine } from '@causeway/engine';
import { StepError, workflow } from '@causeway/workflow';
import type { TaskState } from '@causeway/workflow/internal';
import pg from 'pg';
import { pino } from 'pino';
import { z } from 'zod';
import { testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { startChildren } from './children-support';

/**
 * What a child's step does: `quick` returns at once; the others tell the test they started and
 * wait at their gate. `effect-gate` marks its effect (a boundary) first, so a cancel that came
 * meanwhile ends it `cancel_after_submit`; `gate-boundary` passes a boundary after the gate,
 * where a cancel stops it; `effect-gate-boundary` does both; `gate-fail` fails for good (or
 * with a retryable category, `gate-fail-retryable`); `fail-once-gate` fails at the gate the
 * first time its token runs and succeeds after; `hold` passes a boundary every few
 * milliseconds until its gate opens, so only a cancel or the gate ends it.
 */
export const childPlans = [
  'quick',
  'effect-gate',
  'gate-boundary',
  'effect-gate-boundary',
  'gate-fail',
  'gate-fail-retryable',
  'fail-once-gate',
  'hold',
] as const;
export type ChildPlan = (typeof childPlans)[number];

const childInput = z.object({ token: z.string(), plan: z.enum(childPlans) });
export type ChildInput = z.output<typeof childInput>;

/** A promise with its resolve function (Promise.withResolvers needs Node 22). */
interface Deferred {
  readonly promise: Promise<void>;
  readonly resolve: () => void;
}

function deferred(): Deferred {
  let resolve = () => {};
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** Per token: the step started (its handler runs), and the gate the test opens. */
class Gates {
  private readonly started = new Map<string, Deferred>();
  private readonly gates = new Map<string, Deferred>();
  private readonly opened = new Set<string>();
  private readonly failed = new Set<string>();

  private of(map: Map<string, Deferred>, token: string): Deferred {
    let entry = map.get(token);
    if (entry === undefined) {
      entry = deferred();
      map.set(token, entry);
    }
    return entry;
  }

  hasStarted(token: string): Promise<void> {
    return this.of(this.started, token).promise;
  }

  markStarted(token: string): void {
    this.of(this.started, token).resolve();
  }

  open(token: string): void {
    this.opened.add(token);
    this.of(this.gates, token).resolve();
  }

  isOpen(token: string): boolean {
    return this.opened.has(token);
  }

  passed(token: string): Promise<void> {
    return this.of(this.gates, token).promise;
  }

  /** True the first time a token fails (a `fail-once-gate` child). */
  firstFailure(token: string): boolean {
    if (this.failed.has(token)) return false;
    this.failed.add(token);
    return true;
  }
}

export const gates = new Gates();

const child = workflow({ name: 'race-child', input: childInput })
  .step('work', {
    queue: 'race',
    maxAttempts: 1,
    reentrant: false,
    run: async (ctx) => {
      const { token, plan } = ctx.input;
      if (plan === 'quick') return token;
      if (plan === 'effect-gate' || plan === 'effect-gate-boundary') await ctx.boundary();
      gates.markStarted(token);
      if (plan === 'hold') {
        while (!gates.isOpen(token)) {
          await sleep(3);
          await ctx.boundary();
        }
        return token;
      }
      await gates.passed(token);
      if (plan === 'gate-fail') throw new StepError('invalid_argument', `${token} fails`);
      if (plan === 'gate-fail-retryable') throw new StepError('network', `${token} fails`);
      if (plan === 'fail-once-gate' && gates.firstFailure(token)) {
        throw new StepError('invalid_argument', `${token} fails the first time`);
      }
      if (plan === 'gate-boundary' || plan === 'effect-gate-boundary') await ctx.boundary();
      return token;
    },
  })
  .build();

const parent = workflow({
  name: 'race-parent',
  input: z.object({ children: z.array(childInput) }),
})
  .step('fan', {
    queue: 'race',
    run: (ctx) => startChildren(child, ctx.input.children),
  })
  .build();

/** Two engines, each with a worker, on one database; `pool` reads what they wrote. */
export class RaceRig {
  readonly pool: pg.Pool;
  readonly engines: readonly Engine[];
  /** Warnings and errors of both engines, for a failure's message. */
  readonly engineLog: string[] = [];

  private constructor(readonly url: string) {
    this.pool = new pg.Pool({ connectionString: url, max: 4 });
    const logger = pino({ level: 'warn' }, { write: (line: string) => this.engineLog.push(line) });
    // Leases long enough that a write delayed by deadlocks (each about a second of
    // deadlock_timeout, and they can follow each other) still lands within its lease: a
    // child asked to cancel is no longer renewed (R9), and the sweeper would end it first.
    const options = { workflows: [child, parent], poolSize: 12, logger, leaseMs: 30_000 };
    this.engines = [testEngine(url, options), testEngine(url, options)];
  }

  static async start(url: string): Promise<RaceRig> {
    const rig = new RaceRig(url);
    await rig.engines[0]?.migrate();
    for (const engine of rig.engines)
      await engine.startWorker({ queues: ['race'], concurrency: 16 });
    return rig;
  }

  engine(index: number): Engine {
    return this.engines[index % this.engines.length] as Engine;
  }

  async submit(children: readonly ChildInput[], engine: number): Promise<string> {
    const { workflow: submitted } = await this.engine(engine).submit('race-parent', { children });
    return submitted.id;
  }

  /** The parent step's task id and tally, once it awaits its children. */
  async step(rootId: string): Promise<StepRow> {
    const { rows } = await this.pool.query<StepRow>(
      `select id, state, children_total, children_succeeded, children_failed
         from causeway_tasks where workflow_id = $1`,
      [rootId],
    );
    return rows[0] as StepRow;
  }

  /** Waits until the parent and every counted child are terminal; false when it never comes. */
  async settled(rootId: string, timeoutMs = 15_000): Promise<boolean> {
    try {
      await waitFor(
        async () => {
          const { rows } = await this.pool.query<{ open: number }>(
            `select count(*)::int as open from causeway_workflows
              where (id = $1 or (parent_workflow_id = $1 and not replaced))
                and state not in ('succeeded', 'cancelled', 'dead')`,
            [rootId],
          );
          return rows[0]?.open === 0;
        },
        { timeoutMs, intervalMs: 5, description: `tree ${rootId} terminal` },
      );
      return true;
    } catch {
      return false;
    }
  }

  /** Deadlocks PostgreSQL has counted in this database (40P01), once its statistics are out. */
  async deadlocks(): Promise<number> {
    // Backends report their counts when idle, within a second.
    await sleep(1_200);
    const { rows } = await this.pool.query<{ deadlocks: string }>(
      'select deadlocks from pg_stat_database where datname = current_database()',
    );
    return Number(rows[0]?.deadlocks ?? 0);
  }

  async close(): Promise<void> {
    await Promise.all(this.engines.map((engine) => engine.close({ drainMs: 2_000 })));
    await this.pool.end();
  }
}

export interface StepRow {
  readonly id: string;
  readonly state: TaskState;
  readonly children_total: number | null;
  readonly children_succeeded: number | null;
  readonly children_failed: number | null;
}

/** Runs `iteration(0..count-1)` on `lanes` concurrent lanes. */
export async function inLanes(
  count: number,
  lanes: number,
  iteration: (index: number) => Promise<void>,
): Promise<void> {
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      for (let index = lane; index < count; index += lanes) await iteration(index);
    }),
  );
}

/** Runs `first` and `second` at once, one of them `skewMs` later (0: the same tick). */
export function together<A, B>(
  first: () => Promise<A>,
  second: () => Promise<B>,
  skewMs: number,
  secondLater: boolean,
): Promise<[A, B]> {
  const later = async <T>(run: () => Promise<T>) => {
    await sleep(skewMs);
    return run();
  };
  return Promise.all([
    secondLater || skewMs === 0 ? first() : later(first),
    secondLater && skewMs > 0 ? later(second) : second(),
  ]);
}
