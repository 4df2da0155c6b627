import type {
  Actor,
  RateLimit,
  Refusal,
  TaskEdge,
  TaskEvent,
  WorkflowRegistry,
  WorkflowState,
} from '@causeway/workflow/internal';
import type { Transaction } from 'kysely';
import type { LeaseFence } from '../../db/lease/lease-fence';
import type { TaskRecord, WorkflowRecord } from '../../db/rows';
import type { CausewayDatabase } from '../../db/schema';
import type { NewTransitionRow } from '../../db/transition-row';
import type { ChildRequest, ChildStart } from '../children/child-admission';

/** One event for one task, as the engine asks for it. */
export interface EventRequest {
  readonly taskId: string;
  /** The task's workflow, when the caller knows it (saves a lookup). */
  readonly workflowId?: string;
  readonly event: TaskEvent;
  /**
   * Checked on the locked row before the machine decides; false means the caller's view is
   * stale (a lost lease, an already-settled sweep) and nothing is written for this request.
   */
  readonly precondition?: (task: TaskRecord, now: Date) => boolean;
  /**
   * The writer's lease: like a precondition that the task still holds it (`holdsLease`), but
   * one the one-statement settle can check in SQL too.
   */
  readonly fence?: LeaseFence;
  /**
   * The one-statement settle leaves this request to the full decision: its step may make ready
   * a step with a delay (R36) or an event step (R37), which only the machine promotes.
   */
  readonly decideInFull?: true;
  /**
   * False when the request's workflow is known not to be a child its parent step awaits (R45):
   * the one-statement settle then leaves out what counts child workflows' ends.
   */
  readonly awaitedChild?: boolean;
  /**
   * What goes with the edge: the step's output, the receipt to wait for, and a send request
   * for the outbox, written in the same transaction as the edge (R22).
   */
  readonly extra?: {
    readonly outputJson?: string;
    readonly receipt?: { id: string; timeoutMs: number };
    readonly outbox?: {
      readonly id: string;
      readonly channel: string;
      readonly payloadJson: string;
    };
    /** The children a `startChildren` result starts with the edge (R43). */
    readonly children?: ChildRequest;
  };
}

/** A workflow-wide cancel, applied to every task that can still be stopped. */
export interface WorkflowCancelRequest {
  readonly workflowId: string;
  readonly actor: Actor;
  readonly reason?: string | undefined;
}

export type EventOutcome =
  | {
      readonly kind: 'applied';
      readonly taskId: string;
      readonly edge: TaskEdge;
      readonly task: TaskRecord;
    }
  | {
      readonly kind: 'refused';
      readonly taskId: string;
      readonly refusal: Refusal;
      readonly task: TaskRecord;
    }
  | { readonly kind: 'stale'; readonly taskId: string; readonly task: TaskRecord | undefined }
  | { readonly kind: 'skipped'; readonly taskId: string }
  /** The task's workflow is not defined in this engine (another version's); nothing written. */
  | { readonly kind: 'undefined_workflow'; readonly taskId: string; readonly name: string };

export interface ApplyResult {
  readonly outcomes: readonly EventOutcome[];
  readonly workflowCancels: readonly {
    workflowId: string;
    edges: number;
    state: WorkflowState | undefined;
  }[];
  /** Every row appended to the log, in order. */
  readonly transitions: readonly NewTransitionRow[];
  /** The locked workflows and all their tasks as they are after the writes. */
  readonly workflows: ReadonlyMap<string, WorkflowRecord>;
  readonly tasks: ReadonlyMap<string, TaskRecord>;
  /** Database time of the transaction. */
  readonly now: Date;
}

export interface ApplyContext {
  readonly definitions: WorkflowRegistry;
  readonly leaseMs: number;
  readonly random: () => number;
  /** The engine's rate limits (R51); absent: none. */
  readonly rateLimits?: readonly RateLimit[];
  /**
   * Writes the children steps start (R43), given by the engine: the submission it uses decides
   * events itself, so the decision cannot import it. Without it, no step may start children.
   */
  readonly writeChildren?: (
    tx: Transaction<CausewayDatabase>,
    starts: readonly ChildStart[],
  ) => Promise<void>;
}

export interface ApplyOptions {
  readonly skipLocked?: boolean;
  readonly workflowCancels?: readonly WorkflowCancelRequest[];
  /** Workflow ids already known, saving a lookup. */
  readonly workflowIdOf?: ReadonlyMap<string, string>;
  /** Lease holder written by claims. */
  readonly holder?: string;
}
