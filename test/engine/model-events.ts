/**
 * `engine.sendEvent` against the model (R37, R38), for the engine model test.
 *
 * What the model expects, from the contract:
 *   - a payload that the schema of a step waiting for this name refuses is refused with
 *     `invalid_event_payload`, nothing written (R38);
 *   - a repeat of an idempotency key (for this name) stores nothing and answers the first
 *     send: its id, its time, the tasks it completed so far (at its send or later) as they are
 *     now; the same key for another event key is a `conflict`, nothing written;
 *   - otherwise the event is kept, and in the same transaction every task waiting for its name
 *     and key is completed (`event_received`, by the sender, output = the payload); what that
 *     starts may take kept events in turn (R37). The answer lists the tasks it completed.
 *
 * Sends: `matching` a waiting task's name and key; `early` the name and key of an event step
 * that does not wait yet (the event is kept; the step takes it when it starts waiting);
 * `unmatched` a key nobody waits for; `duplicate` an earlier event of the run again, with its
 * idempotency key if it had one; `conflict` an earlier key for another event key; `invalid` a
 * payload the ping's schema refuses. By a client or an operator, with or without a key; an
 * operator gives a reason (a new one each send: a repeat must keep the first send's, R38).
 *
 * `WaitGivesUpCommand` lines up what independent commands rarely do: a wait reaches its
 * timeout and the sweeper ends it (R39), its event arrives afterwards (kept: nobody waits),
 * and an operator replays the dead step, which waits again and takes the kept event at once.
 */
import { EngineError } from '@causeway/engine';
import type { Actor } from '@causeway/workflow/internal';
import fc from 'fast-check';
import { expect } from 'vitest';
import { ClockCommand } from './model-clock';
import {
  clockOf,
  expectRows,
  inLogOrder,
  ModelCommand,
  rowsOf,
  tally,
  terminalStates,
} from './model-harness';
import { BulkRequeueCommand, deadReasons, ReplayCommand } from './model-replay';
import type { EngineModel } from './model-state';
import type { RealSystem } from './model-system';
import { pingPayload } from './model-workflows';

export type SendKind = 'matching' | 'early' | 'unmatched' | 'duplicate' | 'conflict' | 'invalid';

interface PlannedSend {
  readonly name: string;
  readonly key: string;
  readonly payload: unknown;
  readonly idempotencyKey: string | null;
}

/** The (name, key) pairs the model's workflows wait for (model-workflows.ts). */
const usedPairs = [
  { name: 'model.approved', key: 'k0' },
  { name: 'model.approved', key: 'k1' },
  { name: 'model.ping', key: 'p' },
] as const;

/** R38: the only step with a payload schema waits for `model.ping`. */
function payloadRefusal(name: string, payload: unknown): string | null {
  return name === 'model.ping' && !pingPayload.safeParse(payload).success
    ? 'invalid_event_payload'
    : null;
}

export class SendEventCommand extends ModelCommand {
  constructor(
    readonly send: SendKind,
    readonly index: number,
    readonly operator: boolean,
    readonly keyed: boolean,
    /** A name and key chosen by a scenario (`WaitGivesUpCommand`) instead of by `send`. */
    readonly fixed: { readonly name: string; readonly key: string } | null = null,
  ) {
    super(0);
  }

  toString() {
    const what = this.fixed === null ? `${this.send} ${this.index}` : `for ${this.fixed.key}`;
    return `sendEvent(${what}${this.keyed ? ', keyed' : ''}${this.operator ? ', by operator' : ''})`;
  }

  protected async execute(model: EngineModel, system: RealSystem, label: string) {
    const planned = this.plan(model, system);
    const { name, key, payload, idempotencyKey } = planned;
    label = `${label} = ${name} ${key}${idempotencyKey === null ? '' : ` [${idempotencyKey}]`}`;
    const sender: Actor = this.operator ? { kind: 'operator', name: 'erin' } : { kind: 'client' };
    const reason = this.operator ? `because ${model.events.events.length}` : null;
    const before = await system.now();
    let answer: unknown;
    try {
      answer = await system.engine.sendEvent(name, key, payload, {
        ...(idempotencyKey === null ? {} : { idempotencyKey }),
        ...(this.operator ? { operator: 'erin' } : {}),
        ...(reason === null ? {} : { reason }),
      });
    } catch (error) {
      if (!(error instanceof EngineError)) throw error;
      answer = { error: error.code };
    }
    const after = await system.now();
    const rows = await system.takeRows();

    const refusal = payloadRefusal(name, payload);
    const earlier =
      idempotencyKey === null ? undefined : model.events.byIdempotencyKey(name, idempotencyKey);
    if (refusal !== null || (earlier !== undefined && earlier.key !== key)) {
      tally(`sendEvent: refused ${refusal ?? 'conflict'}`);
      expect(answer, `${label}: answer`).toEqual({ error: refusal ?? 'conflict' });
      expectRows(label, rows, []);
      return;
    }
    if (earlier !== undefined) {
      // R38: idempotent by its key: nothing written, the first send's answer.
      tally('sendEvent: deduplicated');
      expect(answer, `${label}: answer`).toEqual({
        eventId: earlier.id,
        receivedAt: earlier.receivedAt,
        deduplicated: true,
        tasks: deliveredTasks(model, earlier.id),
      });
      expectRows(label, rows, []);
      return;
    }
    const sent = answer as { eventId: string; receivedAt: Date; deduplicated: boolean };
    expect(sent.deduplicated, `${label}: deduplicated`).toBe(false);
    expect(sent.receivedAt.getTime(), `${label}: received`).toBeGreaterThanOrEqual(
      before.getTime(),
    );
    expect(sent.receivedAt.getTime(), `${label}: received`).toBeLessThanOrEqual(after.getTime());
    const event = model.events.add({
      id: sent.eventId,
      name,
      key,
      payload,
      idempotencyKey,
      sender,
      reason,
      receivedAt: sent.receivedAt,
    });
    // The send's transaction time: its rows' (nothing is decided by time without rows).
    const now = rows[0]?.at ?? sent.receivedAt;
    const clock = clockOf(now, 0);
    const waiting = model
      .tasks()
      .filter(
        (task) =>
          task.task.snapshot.state === 'waiting' &&
          task.columns.wait?.name === name &&
          task.columns.wait.key === key &&
          task.workflow.acceptedSeq < event.seq,
      )
      .map((task) => ({ taskId: task.task.taskId }));
    tally(
      `sendEvent: ${this.send}, ${Math.min(waiting.length, 2)}${waiting.length > 1 ? '+' : ''} waiting`,
    );
    const expected = inLogOrder(waiting, rows).flatMap(({ taskId }) =>
      rowsOf(
        model.apply(
          taskId,
          {
            type: 'event_received',
            actor: sender,
            eventId: event.id,
            ...(reason === null ? {} : { reason }),
          },
          clock,
          { output: payload },
        ),
      ),
    );
    expected.push(...model.followUp(clock, rows, system));
    expect(answer, `${label}: answer`).toEqual({
      eventId: event.id,
      receivedAt: event.receivedAt,
      deduplicated: false,
      tasks: deliveredTasks(model, event.id),
    });
    expectRows(label, rows, expected, rows.length > 0 ? now : undefined);
  }

  private plan(model: EngineModel, system: RealSystem): PlannedSend {
    const index = this.index;
    const fresh = this.keyed ? `${system.runId}-event-${model.events.events.length}` : null;
    const payloadFor = (name: string) =>
      name === 'model.ping' ? { ok: index % 2 === 0 } : { by: 'model', index };
    const pair = (candidate: { name: string; key: string }): PlannedSend => ({
      ...candidate,
      payload: payloadFor(candidate.name),
      idempotencyKey: fresh,
    });
    const earlier = model.events.events;
    if (this.fixed !== null) return pair(this.fixed);
    switch (this.send) {
      case 'invalid':
        return { name: 'model.ping', key: 'p', payload: { ok: 'yes' }, idempotencyKey: fresh };
      case 'unmatched':
        return pair(
          index % 2 === 0
            ? { name: 'model.approved', key: 'k-nobody' }
            : { name: 'model.ping', key: 'q' },
        );
      case 'duplicate': {
        const again = earlier[index % Math.max(1, earlier.length)];
        if (again !== undefined) return { ...again };
        return pair(usedPairs[index % usedPairs.length] as (typeof usedPairs)[number]);
      }
      case 'conflict': {
        const keyed = earlier.filter((event) => event.idempotencyKey !== null);
        const again = keyed[index % Math.max(1, keyed.length)];
        if (again !== undefined)
          return {
            ...pair({ name: again.name, key: `${again.key}-other` }),
            idempotencyKey: again.idempotencyKey,
          };
        return pair({ name: 'model.approved', key: 'k0' });
      }
      case 'matching': {
        const waits = model
          .tasks()
          .flatMap((task) =>
            task.task.snapshot.state === 'waiting' && task.columns.wait !== null
              ? [task.columns.wait]
              : [],
          );
        const chosen = waits[index % Math.max(1, waits.length)];
        if (chosen !== undefined) return pair(chosen);
        return this.early(model, pair);
      }
      case 'early':
        return this.early(model, pair);
    }
  }

  /** The name and key of an event step that does not wait yet (else of any step's). */
  private early(
    model: EngineModel,
    pair: (candidate: { name: string; key: string }) => PlannedSend,
  ): PlannedSend {
    const pending = model
      .tasks()
      .filter(
        (task) =>
          task.step.event !== undefined &&
          !terminalStates.includes(task.task.snapshot.state) &&
          task.task.snapshot.state !== 'waiting',
      );
    const chosen = pending[this.index % Math.max(1, pending.length)];
    if (chosen?.task.step === 'approval') {
      return pair({
        name: 'model.approved',
        key: `k${(chosen.workflow.input as { n: number }).n % 2}`,
      });
    }
    // A confirm's key depends on the ping's payload, not known yet: either of its two.
    return pair(usedPairs[this.index % 2] as (typeof usedPairs)[number]);
  }
}

/** A wait gives up, its event comes late, and an operator replays it (see the header). */
export class WaitGivesUpCommand extends ModelCommand {
  constructor(
    readonly index: number,
    readonly eventAfter: boolean,
    readonly bulk: boolean,
    readonly operator: boolean,
  ) {
    super(0);
  }

  toString() {
    return `waitGivesUp(${this.index}${this.eventAfter ? ', event after' : ''}, then ${this.bulk ? 'requeueDead' : 'replay'})`;
  }

  override check(model: Readonly<EngineModel>): boolean {
    return waitingTasks(model as EngineModel).length > 0;
  }

  protected async execute(model: EngineModel, system: RealSystem) {
    const waiting = waitingTasks(model);
    const target = waiting[this.index % Math.max(1, waiting.length)];
    if (target === undefined || target.columns.wait === null) return;
    const taskId = target.task.taskId;
    const { name, key } = target.columns.wait;
    // The clock's `wait` target lists the waiting tasks in this same order.
    await new ClockCommand('wait', this.index % waiting.length, 0, true, 0).run(model, system);
    if (this.eventAfter) {
      await new SendEventCommand('matching', 0, this.operator, false, { name, key }).run(
        model,
        system,
      );
    }
    if (model.task(taskId).task.snapshot.state !== 'dead') return;
    if (this.bulk) {
      const present = deadReasons.filter((code) =>
        model
          .tasks()
          .some((task) => task.task.snapshot.state === 'dead' && task.columns.last.reason === code),
      );
      const reason = model.task(taskId).columns.last.reason as (typeof deadReasons)[number];
      await new BulkRequeueCommand(present.indexOf(reason)).run(model, system);
    } else {
      const dead = model.tasks().filter((task) => task.task.snapshot.state === 'dead');
      const position = dead.findIndex((task) => task.task.taskId === taskId);
      await new ReplayCommand(position, false).run(model, system);
    }
  }
}

function waitingTasks(model: EngineModel) {
  return model.tasks().filter((task) => task.columns.wait !== null);
}

/** The tasks an event completed, as the answer lists them (R38), in their current state. */
function deliveredTasks(model: EngineModel, eventId: string) {
  return model.events.delivered(eventId).map((delivery) => ({
    taskId: delivery.taskId,
    workflowId: delivery.workflowId,
    step: delivery.step,
    state: model.task(delivery.taskId).task.snapshot.state,
  }));
}

export const sendEventCommand = fc
  .record({
    send: fc.constantFrom<SendKind>(
      'matching',
      'matching',
      'matching',
      'early',
      'early',
      'unmatched',
      'duplicate',
      'conflict',
      'invalid',
    ),
    index: fc.nat({ max: 11 }),
    operator: fc.boolean(),
    keyed: fc.boolean(),
  })
  .map(({ send, index, operator, keyed }) => new SendEventCommand(send, index, operator, keyed));

export const waitGivesUpCommand = fc
  .record({
    index: fc.nat({ max: 11 }),
    eventAfter: fc.oneof(
      { arbitrary: fc.constant(true), weight: 3 },
      { arbitrary: fc.constant(false), weight: 1 },
    ),
    bulk: fc.boolean(),
    operator: fc.boolean(),
  })
  .map(
    ({ index, eventAfter, bulk, operator }) =>
      new WaitGivesUpCommand(index, eventAfter, bulk, operator),
  );
