/**
 * The database side of the concurrency keys' model test (concurrency-keys-model.property.test.ts):
 * the command base class, which runs a command and then holds the database against the model
 * (every task's state, and each key's holders counted by the contract's holding states, in
 * plain SQL), and the cleanup that ends what a run left.
 */
import type fc from 'fast-check';
import { type Kysely, sql } from 'kysely';
import { expect } from 'vitest';
import type { CausewayDatabase } from '../../packages/engine/src/db/schema';
import type { ApplyContext } from '../../packages/engine/src/runtime/decision/event-request';
import type { testEngine } from '../helpers/engine';
import { groupOf, type KeysModel, keyName, modelLeaseMs } from './concurrency-keys-model';

export type Engine = ReturnType<typeof testEngine>;
export interface Real {
  readonly engine: Engine;
  readonly db: Kysely<CausewayDatabase>;
  readonly apply: ApplyContext;
  readonly run: number;
}
export type Command = fc.AsyncCommand<KeysModel, Real>;
export type Path = 'one statement' | 'in full';

/** How often each command and each kind of claim was reached (CAUSEWAY_FC_STATS=1 prints it). */
export const reached = new Map<string, number>();
export function tally(what: string) {
  reached.set(what, (reached.get(what) ?? 0) + 1);
}

/** Every task of the run as the database has it, in plain SQL. */
async function storedTasks(real: Real, model: KeysModel) {
  const { rows } = await sql<{
    id: string;
    state: string;
    lease_holder: string | null;
    concurrency_group: string | null;
    concurrency_key: string | null;
  }>`select id, state, lease_holder, concurrency_group, concurrency_key from causeway_tasks
     where id = any(${model.tasks.map((task) => task.id)}::uuid[])`.execute(real.db);
  return rows;
}

/** The invariant after every command: holders per key as the contract counts them. */
async function compare(model: KeysModel, real: Real, label: string) {
  const rows = await storedTasks(real, model);
  const byId = new Map(rows.map((row) => [row.id, row]));
  for (const task of model.tasks) {
    const row = byId.get(task.id);
    expect(row?.state, `${label}: state of ${task.kind} task of key ${task.key}`).toBe(task.state);
    expect([row?.concurrency_group, row?.concurrency_key], label).toEqual([
      groupOf(task.kind),
      task.key,
    ]);
  }
  for (const key of model.keys()) {
    // Read with the contract's holding states, not the engine's: `cancel_requested` holds
    // only while the lease it had as `leased` is kept.
    const held = rows.filter(
      (row) =>
        row.concurrency_group === key.group &&
        row.concurrency_key === key.key &&
        (row.state === 'leased' ||
          row.state === 'awaiting_receipt' ||
          (row.state === 'cancel_requested' && row.lease_holder !== null)),
    ).length;
    expect(held, `${label}: holders of ${keyName(key)}`).toBeLessThanOrEqual(key.limit);
    expect(held, `${label}: holders of ${keyName(key)}`).toBe(model.held(key));
  }
}

export abstract class KeysCommand implements Command {
  check(_model: Readonly<KeysModel>): boolean {
    return true;
  }
  async run(model: KeysModel, real: Real): Promise<void> {
    const label = this.toString();
    tally(label.split('(')[0] as string);
    await this.execute(model, real, label);
    await compare(model, real, label);
  }
  protected abstract execute(model: KeysModel, real: Real, label: string): Promise<void>;
  abstract toString(): string;
}

/** Ends everything a run left, so later runs' claims and sweeps see none of it. */
export async function cleanup(model: KeysModel, real: Real) {
  for (const task of model.tasks) {
    if (task.state === 'queued' || task.state === 'leased') await real.engine.cancelTask(task.id);
    if (task.state === 'awaiting_receipt') await real.engine.recordReceipt(task.id, { ok: true });
  }
  await sql`update causeway_clock set offset_ms = offset_ms + ${modelLeaseMs + 1_000}`.execute(
    real.db,
  );
  await real.engine.sweep();
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from causeway_tasks
    where id = any(${model.tasks.map((task) => task.id)}::uuid[])
      and state not in ('succeeded', 'cancelled', 'dead')`.execute(real.db);
  expect(rows[0]?.n, 'the run left no live task behind').toBe(0);
}
