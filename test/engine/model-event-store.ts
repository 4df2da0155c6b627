/**
 * The engine model's own record of events (R37, R38), written from the contract for the engine
 * model test, not from the engine's tables:
 *   - every event sent is kept, whoever waits for it, with its idempotency key (per name);
 *   - a wait takes the first event of its name and key received after its workflow was
 *     accepted. Runs are sequential, so "after" is the order of the commands: each workflow
 *     and each event gets the next number of one sequence when it is accepted or stored;
 *   - which event completed which task, in the order the engine answers a repeated send with:
 *     the order of the transactions that delivered it, and by task id within one;
 *   - what a wait waits for: its name, and its key from the input and upstream outputs.
 */
import type {
  Actor,
  StepInputProblem,
  WorkflowDefinition,
  WorkflowRun,
  WorkflowStep,
} from '@causeway/workflow/internal';
import type { EngineColumns, WaitStart } from './model-rows';

export interface ModelEvent {
  /** The engine's id (its answer names it; the model cannot guess a UUID). */
  readonly id: string;
  readonly name: string;
  readonly key: string;
  readonly payload: unknown;
  readonly idempotencyKey: string | null;
  /** Who sent it: the edges that deliver it are theirs (R24). */
  readonly sender: Actor;
  /** The sender's reason, or null: the edges that deliver it carry it (R38). */
  readonly reason: string | null;
  /** The database time the engine's answer says it was received at. */
  readonly receivedAt: Date;
  /** Its place in the run's sequence of acceptances and events. */
  readonly seq: number;
}

/** A task an event completed. */
export interface Delivery {
  readonly taskId: string;
  readonly workflowId: string;
  readonly step: string;
  /** Identifies the delivering transaction: its `now` (one Date object per transaction). */
  readonly transaction: Date;
}

export class ModelEventStore {
  readonly events: ModelEvent[] = [];
  private readonly deliveries = new Map<string, Delivery[]>();
  private sequence = 0;

  /** The next number of the sequence (a workflow's acceptance, an event's arrival). */
  nextSeq(): number {
    this.sequence += 1;
    return this.sequence;
  }

  /** R38: the event stored before under this idempotency key for this name, if any. */
  byIdempotencyKey(name: string, idempotencyKey: string): ModelEvent | undefined {
    return this.events.find(
      (event) => event.name === name && event.idempotencyKey === idempotencyKey,
    );
  }

  add(event: Omit<ModelEvent, 'seq'>): ModelEvent {
    const stored = { ...event, seq: this.nextSeq() };
    this.events.push(stored);
    return stored;
  }

  /** R37: the first event of (name, key) received after the acceptance numbered `acceptedSeq`. */
  firstMatch(name: string, key: string, acceptedSeq: number): ModelEvent | undefined {
    return this.events.find(
      (event) => event.name === name && event.key === key && event.seq > acceptedSeq,
    );
  }

  recordDelivery(eventId: string, delivery: Delivery): void {
    const list = this.deliveries.get(eventId) ?? [];
    list.push(delivery);
    this.deliveries.set(eventId, list);
  }

  /** The tasks an event completed so far: by delivering transaction, then by task id. */
  delivered(eventId: string): Delivery[] {
    const list = this.deliveries.get(eventId) ?? [];
    const transactions = [...new Set(list.map((delivery) => delivery.transaction))];
    return transactions.flatMap((transaction) =>
      list
        .filter((delivery) => delivery.transaction === transaction)
        .sort((a, b) => (a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : 0)),
    );
  }
}

/**
 * What an event step waits for (R37): its event's name, its key from the input and the
 * upstream outputs (the test's own key functions, model-workflows.ts), and its timeout; null
 * for a step that runs code.
 */
export function waitOf(
  step: WorkflowStep,
  input: unknown,
  results: Readonly<Record<string, unknown>>,
): WaitStart | null {
  if (step.event === undefined) return null;
  const key = step.event.key({ input, results } as Parameters<typeof step.event.key>[0]);
  return { name: step.event.name, key, timeoutMs: step.event.timeoutMs };
}

/**
 * R58, as the contract says: an event step whose key function throws does not wait; it ends
 * dead with the error — here the engine's wording, "the key function threw: <message>" — in
 * the `unknown` category (an error that is not a StepError). Null for a key that works.
 */
export function keyProblemOf(
  step: WorkflowStep,
  input: unknown,
  results: Readonly<Record<string, unknown>>,
): StepInputProblem | null {
  try {
    waitOf(step, input, results);
    return null;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      input: 'event_key',
      category: 'unknown',
      summary: `the key function threw: ${message}`,
    };
  }
}

/** The outputs of the steps a step runs after, directly or transitively, as the model holds them. */
export function upstreamOutputs(
  workflow: {
    readonly definition: WorkflowDefinition;
    readonly run: WorkflowRun;
    readonly columns: ReadonlyMap<string, EngineColumns>;
  },
  step: WorkflowStep,
): Record<string, unknown> {
  const results: Record<string, unknown> = {};
  const visit = (name: string) => {
    const after = workflow.definition.steps.find((candidate) => candidate.name === name)?.after;
    for (const upstream of after ?? []) {
      if (upstream in results) continue;
      const task = workflow.run.tasks.find((candidate) => candidate.step === upstream);
      results[upstream] = task === undefined ? null : workflow.columns.get(task.taskId)?.output;
      visit(upstream);
    }
  };
  visit(step.name);
  return results;
}
