import { hostname } from 'node:os';
import { type WorkflowRegistry, workflowVersion } from '@causeway/workflow/internal';
import type { Kysely } from 'kysely';
import type { CausewayDatabase } from '../../db/schema';
import { workerDeregister } from '../../db/workers/worker-deregister';
import { workerHeartbeat } from '../../db/workers/worker-heartbeat';
import { workerRegister } from '../../db/workers/worker-register';
import type { WorkerRegistration } from '../../db/workers/worker-rows';
import type { Logger } from '../../logger';
import { engineVersion } from './engine-version';

/** How the registry row is kept (EngineOptions `workerHeartbeatMs`, `workerAgeOutMs`, `appVersion`). */
export interface RegistryOptions {
  readonly heartbeatMs: number;
  readonly ageOutMs: number;
  readonly appVersion: string | null;
}

/** What one worker serves: its queues' slots, and whether it runs the sweeper. */
export interface RegistryMember {
  readonly slots: ReadonlyMap<string, number>;
  readonly sweeps: boolean;
}

/**
 * Rows stale for this long are pruned by any heartbeat: long enough for an operator to see a
 * crashed worker in `workers(includeStale: true)` after the page, short enough that restarts
 * cannot grow the table without bound.
 */
export const registryPruneAfterMs = 3_600_000;

/**
 * The engine's row in the worker registry (issue 18). Leases belong to the engine's holder, so
 * the row does too: it sums the queues of every worker the engine runs. Written when a worker
 * starts (before it claims) and when one stops, heartbeated on its own timer while any runs,
 * and deleted when the last one stops cleanly. Writes run one at a time, off the claim and
 * settle paths; a failed one is logged and the next heartbeat retries (re-registering if the
 * row is gone), so the registry can never stop a worker.
 */
export class WorkerRegistry {
  private readonly members = new Set<RegistryMember>();
  private timer: NodeJS.Timeout | null = null;
  private writes: Promise<void> = Promise.resolve();
  private beating = false;

  constructor(
    private readonly db: Kysely<CausewayDatabase>,
    private readonly holder: string,
    private readonly definitions: WorkflowRegistry,
    private readonly logger: Logger,
    readonly options: RegistryOptions,
  ) {}

  /** A worker starts: the row lists what it serves before it claims anything. */
  join(member: RegistryMember): Promise<void> {
    this.members.add(member);
    this.timer ??= setInterval(() => this.beat(), this.options.heartbeatMs);
    return this.serially(() => this.register());
  }

  /** A worker stopped (after its drain): the row drops it; the last one removes the row. */
  leave(member: RegistryMember): Promise<void> {
    if (!this.members.delete(member)) return this.writes;
    if (this.members.size > 0) return this.serially(() => this.register());
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    return this.serially(() => workerDeregister(this.db, this.holder));
  }

  /** One heartbeat at a time: a slow database delays the next instead of piling them up. */
  private beat(): void {
    if (this.beating) return;
    this.beating = true;
    void this.serially(async () => {
      if (this.members.size === 0) return;
      const { ageOutMs } = this.options;
      const found = await workerHeartbeat(this.db, this.holder, ageOutMs, registryPruneAfterMs);
      if (!found) {
        this.logger.warn('worker registry row was gone; registering again');
        await this.register();
      }
    }).finally(() => {
      this.beating = false;
    });
  }

  private register(): Promise<void> {
    return workerRegister(this.db, this.registration(), this.options.ageOutMs);
  }

  private registration(): WorkerRegistration {
    const slots = new Map<string, number>();
    for (const member of this.members) {
      for (const [queue, count] of member.slots) slots.set(queue, (slots.get(queue) ?? 0) + count);
    }
    return {
      holder: this.holder,
      host: hostname(),
      pid: process.pid,
      queues: [...slots]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, count]) => ({ name, slots: count })),
      // Every version it defines (R54), each name's latest last, as the registry lists them.
      workflows: this.definitions.versions.map((definition) => ({
        name: definition.name,
        version: workflowVersion(definition),
        latest: this.definitions.get(definition.name) === definition,
        steps: definition.steps.map((step) => step.name),
      })),
      sweeper: [...this.members].some((member) => member.sweeps),
      engineVersion: engineVersion(),
      appVersion: this.options.appVersion,
    };
  }

  private serially(write: () => Promise<void>): Promise<void> {
    const next = this.writes.then(write).catch((error: unknown) => {
      this.logger.warn({ err: error }, 'worker registry write failed; the next heartbeat retries');
    });
    this.writes = next;
    return next;
  }
}
