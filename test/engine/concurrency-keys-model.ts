/**
 * The model of the concurrency keys' model test (concurrency-keys-model.property.test.ts),
 * written from the contract (SPEC R50 and the task machine's table), not from the engine:
 * each task's state, and which states hold a slot of its key. A task holds its key's slot in
 * `leased`, `awaiting_receipt`, and `cancel_requested` entered from `leased` (the only way a
 * one-step task gets there); `queued` and every end state hold none.
 */
import { defineWorkflow, step } from '@causeway/workflow';
import { z } from 'zod';

export const modelQueue = 'q-keys-model';
/** A lease long beside the claims' clock moves, so only the expiry command ends one. */
export const modelLeaseMs = 60_000;
export const modelHolder = 'keys-model-host/1/boot';

const input = z.object({ key: z.string(), n: z.number().int() });
type Input = z.output<typeof input>;
/** Retries wait no backoff, and never run out: an expired lease makes the task due again. */
const retry = { maxAttempts: 1_000, backoff: { initialIntervalMs: 0, maximumIntervalMs: 0 } };

/** The shapes a submit picks: a plain task, or a keyed one of a group of limit 1 or 2. */
export const modelKinds = ['plain', 'limit-1', 'limit-2'] as const;
export type ModelKind = (typeof modelKinds)[number];
export const kindLimit: Readonly<Record<ModelKind, number | null>> = {
  plain: null,
  'limit-1': 1,
  'limit-2': 2,
};
const keyed = (kind: 'limit-1' | 'limit-2', limit: number) =>
  defineWorkflow({
    name: `keys-model-${kind}`,
    input,
    steps: {
      only: step<Input>({
        queue: modelQueue,
        ...retry,
        concurrency: { key: (ctx) => ctx.input.key, limit, group: `keys-model-${kind}` },
        run: () => null,
      }),
    },
  });
export const modelDefinitions = [
  defineWorkflow({
    name: 'keys-model-plain',
    input,
    steps: { only: step<Input>({ queue: modelQueue, ...retry, run: () => null }) },
  }),
  keyed('limit-1', 1),
  keyed('limit-2', 2),
];
export const workflowNameOf = (kind: ModelKind) => `keys-model-${kind}`;
export const groupOf = (kind: ModelKind) => (kind === 'plain' ? null : `keys-model-${kind}`);

export type ModelTaskState =
  | 'queued'
  | 'leased'
  | 'cancel_requested'
  | 'awaiting_receipt'
  | 'succeeded'
  | 'cancelled';

/** The states that hold a slot, as the contract names them. */
export const holdingStates: readonly ModelTaskState[] = [
  'leased',
  'cancel_requested',
  'awaiting_receipt',
];
/** The states in which a worker holds the lease (and may write with its fence). */
export const leaseStates: readonly ModelTaskState[] = ['leased', 'cancel_requested'];

export interface ModelTask {
  readonly id: string;
  readonly workflowId: string;
  readonly kind: ModelKind;
  /** The key's name in the database (`null` for a plain task). */
  readonly key: string | null;
  state: ModelTaskState;
  /** The lease epoch of its current claim, while it holds one. */
  epoch: number | null;
}

/** A key of the model: its group and name, and the limit its definition declares. */
export interface ModelKey {
  readonly group: string;
  readonly key: string;
  readonly limit: number;
}

export class KeysModel {
  readonly tasks: ModelTask[] = [];

  keys(): ModelKey[] {
    const seen = new Map<string, ModelKey>();
    for (const task of this.tasks) {
      const group = groupOf(task.kind);
      const limit = kindLimit[task.kind];
      if (group === null || task.key === null || limit === null) continue;
      seen.set(`${group}\u0000${task.key}`, { group, key: task.key, limit });
    }
    return [...seen.values()];
  }

  of(key: ModelKey): ModelTask[] {
    return this.tasks.filter((task) => groupOf(task.kind) === key.group && task.key === key.key);
  }

  held(key: ModelKey): number {
    return this.of(key).filter((task) => holdingStates.includes(task.state)).length;
  }

  /**
   * What a claim of `limit` takes, by the contract: of each key `min(limit − held, due)`,
   * and every due plain task, unless that comes to more than `limit`.
   */
  claimShares(): { perKey: Map<string, number>; plain: number; total: number } {
    const perKey = new Map<string, number>();
    let total = 0;
    for (const key of this.keys()) {
      const due = this.of(key).filter((task) => task.state === 'queued').length;
      const share = Math.min(Math.max(key.limit - this.held(key), 0), due);
      perKey.set(keyName(key), share);
      total += share;
    }
    const plain = this.tasks.filter(
      (task) => task.kind === 'plain' && task.state === 'queued',
    ).length;
    return { perKey, plain, total: total + plain };
  }

  pick(index: number, states: readonly ModelTaskState[] | null): ModelTask | undefined {
    const pool =
      states === null ? this.tasks : this.tasks.filter((task) => states.includes(task.state));
    return pool.length === 0 ? undefined : pool[index % pool.length];
  }
}

export const keyName = (key: { group: string | null; key: string | null }) =>
  `${key.group}/${key.key}`;
