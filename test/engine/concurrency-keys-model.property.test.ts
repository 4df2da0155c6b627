/**
 * Model-based test of concurrency keys (R50) on PostgreSQL: fast-check generates sequences of
 * submits (plain tasks, and keyed ones of a limit-1 and a limit-2 group over three keys),
 * claims of 1–6 tasks on either claim path, fenced settles (success on either settle path,
 * receipt awaited, cancel confirmed), cancel requests, receipts, and lease expiries (the
 * database clock moves past every lease and the engine sweeps). The model
 * (concurrency-keys-model.ts) follows each task's state from the contract alone. After every
 * command, for each key: the tasks in holding states, read from the database with plain SQL,
 * are as many as the model holds and never more than the limit; every task's state is the
 * model's; and a claim took exactly `min(limit − held, due)` of each key (and every due plain
 * task) whenever that fit in the claim's limit, or else exactly its limit, none of a key past
 * its share.
 *
 * Settings: CAUSEWAY_FC_KEYS_RUNS (default 50 runs of up to 40 commands); CAUSEWAY_FC_STATS=1
 * prints how often each command and each kind of claim was reached.
 */
import { type TaskEvent, workflowRegistry } from '@causeway/workflow/internal';
import fc from 'fast-check';
import { type Kysely, sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CausewayDatabase } from '../../packages/engine/src/db/schema';
import { claimInFull } from '../../packages/engine/src/runtime/claim/claim-in-full';
import { claimReadyTasks } from '../../packages/engine/src/runtime/claim/claim-ready-tasks';
import { applyEvents } from '../../packages/engine/src/runtime/decision/apply-events';
import type {
  ApplyContext,
  EventRequest,
} from '../../packages/engine/src/runtime/decision/event-request';
import { settleInOneStatement } from '../../packages/engine/src/runtime/settle/one-statement-settle';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, testEngine } from '../helpers/engine';
import {
  groupOf,
  holdingStates,
  KeysModel,
  keyName,
  leaseStates,
  type ModelKind,
  type ModelTask,
  modelDefinitions,
  modelHolder,
  modelKinds,
  modelLeaseMs,
  modelQueue,
  workflowNameOf,
} from './concurrency-keys-model';
import {
  cleanup,
  type Engine,
  KeysCommand,
  type Path,
  type Real,
  reached,
  tally,
} from './concurrency-keys-model-system';

const database = useTestDatabase();
const worker = { kind: 'worker', name: modelHolder } as const;
const numRuns = Number(process.env.CAUSEWAY_FC_KEYS_RUNS ?? 50);

class Submit extends KeysCommand {
  constructor(
    readonly kind: ModelKind,
    readonly key: number,
  ) {
    super();
  }
  toString() {
    return `submit(${this.kind}${this.kind === 'plain' ? '' : `, key ${this.key}`})`;
  }
  protected async execute(model: KeysModel, real: Real) {
    const key = `run-${real.run}-key-${this.key}`;
    const { workflow } = await real.engine.submit(workflowNameOf(this.kind), {
      key,
      n: model.tasks.length,
    });
    const { rows } = await sql<{ id: string }>`
      select id from causeway_tasks where workflow_id = ${workflow.id}`.execute(real.db);
    model.tasks.push({
      id: rows[0]?.id as string,
      workflowId: workflow.id,
      kind: this.kind,
      key: this.kind === 'plain' ? null : key,
      state: 'queued',
      epoch: null,
    });
  }
}

class Claim extends KeysCommand {
  constructor(
    readonly limit: number,
    readonly path: Path,
  ) {
    super();
  }
  toString() {
    return `claim(${this.limit}, ${this.path})`;
  }
  protected async execute(model: KeysModel, real: Real, label: string) {
    // Time passes between commands: every queued task is due (no backoff), no lease ends.
    await sql`update causeway_clock set offset_ms = offset_ms + 1000`.execute(real.db);
    const shares = model.claimShares();
    const request = { queue: modelQueue, limit: this.limit, holder: modelHolder };
    const result =
      this.path === 'one statement'
        ? await claimReadyTasks(real.db, real.apply, request)
        : await real.db.transaction().execute((tx) => claimInFull(tx, real.apply, request));
    const claimed = new Map(result.claimed.map((task) => [task.task.id, task.task.leaseEpoch]));
    const taken = new Map<string, number>();
    let plain = 0;
    for (const task of model.tasks) {
      const epoch = claimed.get(task.id);
      if (epoch === undefined) continue;
      expect(task.state, `${label}: a claim took a task that is not queued`).toBe('queued');
      task.state = 'leased';
      task.epoch = epoch;
      if (task.kind === 'plain') plain += 1;
      else {
        const name = keyName({ group: groupOf(task.kind), key: task.key });
        taken.set(name, (taken.get(name) ?? 0) + 1);
      }
    }
    expect(claimed.size, `${label}: claimed tasks of other runs`).toBe(
      plain + [...taken.values()].reduce((sum, n) => sum + n, 0),
    );
    const full = [...model.keys()].some(
      (key) => model.held(key) >= key.limit && model.of(key).some((t) => t.state === 'queued'),
    );
    tally(full ? 'claim beside a key at its limit' : 'claim with every key free');
    tally(shares.total <= this.limit ? 'claim under its limit' : 'claim bound by its limit');
    if (shares.total <= this.limit) {
      // The claim's limit was not the bound: each key's share exactly, and every plain task.
      expect(plain, `${label}: plain tasks`).toBe(shares.plain);
      for (const [name, share] of shares.perKey) {
        expect(taken.get(name) ?? 0, `${label}: tasks of ${name}`).toBe(share);
      }
    } else {
      expect(claimed.size, `${label}: tasks claimed`).toBe(this.limit);
      for (const [name, n] of taken) {
        expect(n, `${label}: tasks of ${name}`).toBeLessThanOrEqual(shares.perKey.get(name) ?? 0);
      }
    }
  }
}

type SettleKind = 'complete' | 'await_receipt' | 'boundary';

/** A worker's fenced write for a task it holds: success, a receipt awaited, or a cancel confirmed. */
class Settle extends KeysCommand {
  constructor(
    readonly kind: SettleKind,
    readonly index: number,
    readonly path: Path,
  ) {
    super();
  }
  toString() {
    return `${this.kind}(task ${this.index}${this.kind === 'complete' ? `, ${this.path}` : ''})`;
  }
  private target(model: KeysModel) {
    return model.pick(this.index, this.kind === 'boundary' ? ['cancel_requested'] : leaseStates);
  }
  override check(model: Readonly<KeysModel>) {
    return this.target(model as KeysModel) !== undefined;
  }
  protected async execute(model: KeysModel, real: Real, label: string) {
    const task = this.target(model) as ModelTask;
    const event: TaskEvent = { type: this.kind, actor: worker };
    const request: EventRequest = {
      taskId: task.id,
      workflowId: task.workflowId,
      event,
      fence: { taskId: task.id, holder: modelHolder, epoch: task.epoch as number },
      ...(this.kind === 'complete' ? { extra: { outputJson: 'null' } } : {}),
      ...(this.kind === 'await_receipt'
        ? { extra: { receipt: { id: `receipt-${task.id}`, timeoutMs: 6 * 24 * 3_600_000 } } }
        : {}),
    };
    let kind: string | undefined;
    if (this.kind === 'complete' && this.path === 'one statement') {
      const settled = await settleInOneStatement(real.db, real.apply, [request]);
      kind = settled.decided.get(request)?.kind;
    }
    if (kind === undefined) {
      const result = await real.db
        .transaction()
        .execute((tx) => applyEvents(tx, real.apply, [request]));
      kind = result.outcomes[0]?.kind;
    }
    expect(kind, label).toBe('applied');
    task.state =
      this.kind === 'complete'
        ? 'succeeded'
        : this.kind === 'await_receipt'
          ? 'awaiting_receipt'
          : 'cancelled';
    task.epoch = null;
  }
}

/** A client's cancel: a queued task ends; a leased one is asked to stop and keeps its slot. */
class Cancel extends KeysCommand {
  constructor(
    readonly index: number,
    /** Pick among leased tasks only (else among all). */
    readonly leased: boolean,
  ) {
    super();
  }
  toString() {
    return `cancel(task ${this.index}${this.leased ? ' of the leased' : ''})`;
  }
  private target(model: KeysModel) {
    return model.pick(this.index, this.leased ? ['leased'] : null);
  }
  override check(model: Readonly<KeysModel>) {
    return this.target(model as KeysModel) !== undefined;
  }
  protected async execute(model: KeysModel, real: Real, label: string) {
    const task = this.target(model) as ModelTask;
    const answer = await real.engine.cancelTask(task.id);
    const next: Partial<Record<ModelTask['state'], ModelTask['state']>> = {
      queued: 'cancelled',
      leased: 'cancel_requested',
    };
    const after = next[task.state];
    tally(`cancel of a ${task.state} task`);
    expect(answer.changed, label).toBe(after !== undefined);
    if (after !== undefined) task.state = after;
    if (after === 'cancelled') task.epoch = null;
    expect(answer.state, label).toBe(task.state);
  }
}

/** The receipt a task awaits arrives: it succeeded, and its slot is free. */
class Receipt extends KeysCommand {
  constructor(readonly index: number) {
    super();
  }
  toString() {
    return `receipt(task ${this.index})`;
  }
  override check(model: Readonly<KeysModel>) {
    return (model as KeysModel).pick(this.index, ['awaiting_receipt']) !== undefined;
  }
  protected async execute(model: KeysModel, real: Real, label: string) {
    const task = model.pick(this.index, ['awaiting_receipt']) as ModelTask;
    const answer = await real.engine.recordReceipt(task.id, { ok: true });
    expect(answer.state, label).toBe('succeeded');
    task.state = 'succeeded';
  }
}

/** Every lease runs out and the sweeper ends it: leased tasks retry, cancels are confirmed. */
class Expire extends KeysCommand {
  toString() {
    return 'expire leases';
  }
  protected async execute(model: KeysModel, real: Real) {
    await sql`update causeway_clock set offset_ms = offset_ms + ${modelLeaseMs + 1_000}`.execute(
      real.db,
    );
    await real.engine.sweep();
    for (const task of model.tasks) {
      if (task.state === 'leased') task.state = 'queued';
      else if (task.state === 'cancel_requested') task.state = 'cancelled';
      else continue;
      task.epoch = null;
    }
  }
}

const paths = fc.constantFrom<Path>('one statement', 'in full');
const submit = fc
  .record({ kind: fc.constantFrom(...modelKinds), key: fc.nat(2) })
  .map(({ kind, key }) => new Submit(kind, key));
const claim = fc
  .record({ limit: fc.integer({ min: 1, max: 6 }), path: paths })
  .map(({ limit, path }) => new Claim(limit, path));
const settle = fc
  .record({
    kind: fc.constantFrom<SettleKind>('complete', 'await_receipt', 'boundary'),
    index: fc.nat(20),
    path: paths,
  })
  .map(({ kind, index, path }) => new Settle(kind, index, path));
// Submits and claims three times as often as expiries: keys fill up, and hold their limits.
const commands = [
  submit,
  submit,
  submit,
  claim,
  claim,
  claim,
  settle,
  settle,
  fc
    .record({ index: fc.nat(20), leased: fc.boolean() })
    .map(({ index, leased }) => new Cancel(index, leased)),
  fc.nat(20).map((index) => new Receipt(index)),
  fc.constant(new Expire()),
];

describe('concurrency keys against a model of the contract (R50)', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = testEngine(database().url, { workflows: modelDefinitions, leaseMs: modelLeaseMs });
    await engine.migrate();
  });

  it('holds per key exactly the tasks in holding states, never more than the limit', async () => {
    const apply: ApplyContext = {
      definitions: workflowRegistry(modelDefinitions),
      leaseMs: modelLeaseMs,
      random: () => 0.5,
    };
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.commands(commands, { maxCommands: 40, size: 'max' }),
        async (sequence) => {
          run += 1;
          const real: Real = { engine, db: engine.db as Kysely<CausewayDatabase>, apply, run };
          const model = new KeysModel();
          try {
            await fc.asyncModelRun(() => ({ model, real }), sequence);
          } finally {
            await cleanup(model, real);
          }
        },
      ),
      { numRuns },
    );
    if (process.env.CAUSEWAY_FC_STATS === '1') console.info(JSON.stringify([...reached]));
    expect(await logMismatches(database().url)).toEqual([]);
    // The holding states the model uses are the contract's three.
    expect([...holdingStates].sort()).toEqual(['awaiting_receipt', 'cancel_requested', 'leased']);
  }, 120_000);
});
