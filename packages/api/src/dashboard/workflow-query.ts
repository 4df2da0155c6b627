/** The one GraphQL read behind a workflow's page, and the shape of its answer. */
import {
  terminalTaskStates,
  terminalWorkflowStates,
  type WorkflowAttributes,
} from '@causeway/workflow';

export const workflowQuery = `query DashboardWorkflow($id: ID!) {
  workflow(id: $id) {
    id name version state input idempotencyKey attributes createdAt updatedAt explanation
    transitions { id taskId step from to reason errorCategory errorSummary actor attempt at detail }
    tasks {
      id step queue state attempt maxAttempts runAt leaseHolder leaseExpiresAt
      lastErrorCategory lastError progress replayCount output evidence sending
      outbox { id channel state attempts lastError }
      waitingFor { name key since timeoutAt }
      events { id name key payload sentBy reason receivedAt }
      attempts { attempt epoch holder leasedAt endedAt outcome reason refusedAt }
    }
    blockers { taskId step code message until facts }
    parent { workflow { id name } step index root { id name } depth detached }
    childCounts { step total failed allowedFailures detached workflows byState { state count } }
  }
  definitions { name version steps { name after queue delayMs event { name timeoutMs } } }
}`;

export interface TransitionData {
  readonly id: string;
  readonly taskId: string | null;
  readonly step: string | null;
  readonly from: string | null;
  readonly to: string;
  readonly reason: string;
  readonly errorCategory: string | null;
  readonly errorSummary: string | null;
  readonly actor: string;
  readonly attempt: number;
  readonly at: string;
  readonly detail: unknown;
}

export interface OutboxData {
  readonly id: string;
  readonly channel: string;
  readonly state: string;
  readonly attempts: number;
  readonly lastError: string | null;
}

export interface EventData {
  readonly id: string;
  readonly name: string;
  readonly key: string;
  readonly payload: unknown;
  readonly sentBy: string;
  readonly reason: string | null;
  readonly receivedAt: string;
}

export interface TaskData {
  readonly id: string;
  readonly step: string;
  readonly queue: string;
  readonly state: string;
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly runAt: string | null;
  readonly leaseHolder: string | null;
  readonly leaseExpiresAt: string | null;
  readonly lastErrorCategory: string | null;
  readonly lastError: string | null;
  readonly progress: unknown;
  readonly replayCount: number;
  readonly output: unknown;
  readonly evidence: string | null;
  readonly sending: boolean;
  readonly outbox: readonly OutboxData[];
  readonly waitingFor: {
    readonly name: string;
    readonly key: string | null;
    readonly since: string;
    readonly timeoutAt: string;
  } | null;
  readonly events: readonly EventData[];
  readonly attempts: readonly AttemptData[];
}

/** One claim of a task (R56). */
export interface AttemptData {
  readonly attempt: number;
  readonly epoch: number;
  readonly holder: string;
  readonly leasedAt: string;
  readonly endedAt: string | null;
  readonly outcome: string;
  readonly reason: string | null;
  readonly refusedAt: string | null;
}

export interface BlockerData {
  readonly taskId: string;
  readonly step: string;
  readonly code: string;
  readonly message: string;
  readonly until: string | null;
  readonly facts: unknown;
}

export interface ParentData {
  readonly workflow: { readonly id: string; readonly name: string };
  readonly step: string;
  readonly index: number;
  readonly root: { readonly id: string; readonly name: string };
  readonly depth: number;
  readonly detached: boolean;
}

export interface ChildCountsData {
  readonly step: string;
  readonly total: number;
  readonly failed: number;
  readonly allowedFailures: number;
  readonly detached: number;
  readonly workflows: readonly string[];
  readonly byState: readonly { readonly state: string; readonly count: number }[];
}

export interface WorkflowData {
  readonly id: string;
  readonly name: string;
  /** The version it was accepted under (R54); null if stored before versions. */
  readonly version: string | null;
  readonly state: string;
  readonly input: unknown;
  readonly idempotencyKey: string | null;
  readonly attributes: WorkflowAttributes;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly explanation: string;
  readonly transitions: readonly TransitionData[];
  readonly tasks: readonly TaskData[];
  readonly blockers: readonly BlockerData[];
  readonly parent: ParentData | null;
  readonly childCounts: readonly ChildCountsData[];
}

export interface DefinitionData {
  readonly name: string;
  readonly version: string | null;
  readonly steps: readonly {
    readonly name: string;
    readonly after: readonly string[];
    readonly queue: string;
    readonly delayMs: number | null;
    readonly event: { readonly name: string; readonly timeoutMs: number } | null;
  }[];
}

export interface WorkflowPageData {
  readonly workflow: WorkflowData | null;
  readonly definitions: readonly DefinitionData[];
}

/** The terminal states as GraphQL spells them (UPPER_SNAKE). */
export const finishedWorkflowStates: readonly string[] = terminalWorkflowStates.map((state) =>
  state.toUpperCase(),
);
export const finishedTaskStates: readonly string[] = terminalTaskStates.map((state) =>
  state.toUpperCase(),
);
