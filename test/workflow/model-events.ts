/**
 * The model's own event store for the pure machine's property test (machine.property.test.ts),
 * written from the contract (R37, R38), not from the engine:
 *   - every event sent is kept, whoever waits for it (R38: "an event nobody waits for yet is
 *     kept for later waiters");
 *   - a send is idempotent by its idempotency key, per event name: a repeat stores nothing and
 *     completes nothing (R38);
 *   - a wait is completed by the first event of its name whose key equals the step's key,
 *     received after its workflow was accepted (R37), whenever the wait starts: when the step
 *     enters `waiting` from `pending`, at creation, or again after a replay (R39).
 * Events have ids of their own (`event-<n>`), the ones the `event_received` edges must name.
 */
import type { Actor } from '@causeway/workflow/internal';

export interface ModelEvent {
  readonly id: string;
  readonly name: string;
  readonly key: string;
  /** Who sent it: a client, or an operator by name; the edge that delivers it is theirs. */
  readonly sender: Actor;
  /** Database time it was received at (simulated clock). */
  readonly atMs: number;
  readonly idempotencyKey: string | null;
}

export type SendResult =
  | { readonly stored: true; readonly event: ModelEvent }
  /** R38: the idempotency key was used before for this name; nothing is stored. */
  | { readonly stored: false; readonly event: ModelEvent };

export class EventStore {
  readonly events: ModelEvent[] = [];

  /** `acceptedAtMs`: when the (one) workflow of the run was accepted. */
  constructor(private readonly acceptedAtMs: number) {}

  send(
    name: string,
    key: string,
    sender: Actor,
    atMs: number,
    idempotencyKey: string | null,
  ): SendResult {
    if (idempotencyKey !== null) {
      const earlier = this.events.find(
        (event) => event.name === name && event.idempotencyKey === idempotencyKey,
      );
      if (earlier !== undefined) return { stored: false, event: earlier };
    }
    const event: ModelEvent = {
      id: `event-${this.events.length + 1}`,
      name,
      key,
      sender,
      atMs,
      idempotencyKey,
    };
    this.events.push(event);
    return { stored: true, event };
  }

  /** R37: the event a wait for (name, key) takes when it starts, if one was kept. */
  firstMatch(name: string, key: string): ModelEvent | undefined {
    return this.events.find(
      (event) => event.name === name && event.key === key && event.atMs >= this.acceptedAtMs,
    );
  }

  /** Idempotency keys used so far (for duplicate sends). */
  idempotencyKeys(): { readonly name: string; readonly idempotencyKey: string }[] {
    return this.events.flatMap((event) =>
      event.idempotencyKey === null
        ? []
        : [{ name: event.name, idempotencyKey: event.idempotencyKey }],
    );
  }
}
