import type { NewSubmittedTask, NewWorkflowRow } from '../../db/submission/submission-insert';
import type { NewTransitionRow } from '../../db/transition-row';

/** A workflow of a submit whose definition debounces (R52), with its key and times. */
export interface DebouncedWorkflow {
  readonly workflowId: string;
  readonly name: string;
  readonly key: string;
  readonly quietMs: number;
  readonly maxWaitMs: number | null;
}

/** A first step of a submitted workflow that waits for an event (R37). */
export interface SubmittedWait {
  readonly taskId: string;
  readonly workflowId: string;
  readonly workflowName: string;
  /** The version it is accepted under (R54). */
  readonly workflowVersion: string;
  readonly step: string;
  readonly name: string;
  readonly key: string;
}

/** The rows of a submission, planned by the pure machine before anything is sent. */
export interface Plan {
  readonly workflows: NewWorkflowRow[];
  readonly tasks: NewSubmittedTask[];
  readonly transitions: NewTransitionRow[];
  /** Per request, the workflow id it maps to (a key repeated in the batch maps to the first). */
  readonly requestIds: string[];
  readonly queues: Set<string>;
  /** First steps that wait for an event, with a key an event can match. */
  readonly waits: SubmittedWait[];
  /** The submit's `runAt` (epoch ms), which the insert checks against database time. */
  readonly runAtMs: number | null;
  /** First steps that are map steps: started (promoted) in the submit's transaction (R44). */
  readonly mapRoots: { readonly taskId: string; readonly workflowId: string }[];
  /** Workflows whose definitions debounce (R52): each supersedes its key's unstarted one. */
  readonly debounced: DebouncedWorkflow[];
}
