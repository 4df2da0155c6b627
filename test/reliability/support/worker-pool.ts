/**
 * The scenarios' worker processes (fixtures/load-worker.ts): started, SIGKILLed and respawned,
 * SIGSTOPped and continued, and at the end stopped gracefully. Every process is killed after
 * its test by processes.ts, stopped or not (SIGKILL ends a stopped process too).
 */
import { type FixtureProcess, spawnFixture } from '../../api/fixtures/processes';
import { sleepUnlessAborted } from './sleep-unless-aborted';

export interface WorkerPoolOptions {
  readonly databaseUrl: string;
  readonly platformUrl: string;
  readonly size: number;
  readonly leaseMs: number;
  readonly concurrency: number;
}

const workerScript = new URL('../fixtures/load-worker.ts', import.meta.url);

export class WorkerPool {
  readonly #options: WorkerPoolOptions;
  /** The slots: each holds its current process (replaced on respawn). */
  readonly #slots: FixtureProcess[] = [];
  readonly #stopped = new Set<number>();
  /** Every holder that ever ran, in start order. */
  readonly holders: string[] = [];
  /** Processes that exited without being killed or stopped here, with their last output. */
  readonly crashes: { code: number | null; signal: string | null; output: string }[] = [];
  readonly #expectedExits = new Set<FixtureProcess>();

  constructor(options: WorkerPoolOptions) {
    this.#options = options;
  }

  get size(): number {
    return this.#slots.length;
  }

  async start(): Promise<void> {
    for (let slot = 0; slot < this.#options.size; slot += 1) this.#slots.push(this.#spawn());
    await Promise.all(this.#slots.map((child) => this.#ready(child)));
  }

  /** Slots whose process is neither stopped nor starting, i.e. can be faulted now. */
  runningSlots(): number[] {
    return this.#slots.flatMap((_, slot) => (this.#stopped.has(slot) ? [] : [slot]));
  }

  /** SIGKILL the slot's process, then start a new one in its place (resolves once it is ready). */
  async killAndRespawn(slot: number): Promise<void> {
    const child = this.#slots[slot] as FixtureProcess;
    this.#stopped.add(slot);
    this.#expectedExits.add(child);
    if (child.process.exitCode === null && child.process.signalCode === null) {
      const exited = new Promise((resolve) => child.process.once('exit', resolve));
      child.process.kill('SIGKILL');
      await exited;
    }
    const next = this.#spawn();
    this.#slots[slot] = next;
    await this.#ready(next);
    this.#stopped.delete(slot);
  }

  /** SIGSTOP the slot's process for `ms`, then SIGCONT. */
  async pause(slot: number, ms: number, signal: AbortSignal): Promise<void> {
    const child = this.#slots[slot] as FixtureProcess;
    this.#stopped.add(slot);
    child.process.kill('SIGSTOP');
    await sleepUnlessAborted(ms, signal);
    child.process.kill('SIGCONT');
    this.#stopped.delete(slot);
  }

  /** Graceful stop of every process (IPC `stop`: drain, release, close). */
  async stop(): Promise<void> {
    for (const child of this.#slots) this.#expectedExits.add(child);
    await Promise.all(this.#slots.map((child) => child.stop()));
  }

  /** Throws if a worker process died on its own (a crash is a finding, never load). */
  assertNoCrash(): void {
    if (this.crashes.length > 0) {
      throw new Error(`worker processes crashed: ${JSON.stringify(this.crashes, null, 2)}`);
    }
  }

  #spawn(): FixtureProcess {
    const child = spawnFixture(workerScript, {
      CAUSEWAY_CHILD_DATABASE_URL: this.#options.databaseUrl,
      RELIABILITY_PLATFORM_URL: this.#options.platformUrl,
      RELIABILITY_LEASE_MS: String(this.#options.leaseMs),
      RELIABILITY_CONCURRENCY: String(this.#options.concurrency),
    });
    child.process.once('exit', (code, signal) => {
      if (this.#expectedExits.has(child)) return;
      this.crashes.push({ code, signal, output: child.output().slice(-4_000) });
    });
    return child;
  }

  async #ready(child: FixtureProcess): Promise<void> {
    const { holder } = await child.ready(60_000);
    if (holder !== undefined) this.holders.push(holder);
  }
}
