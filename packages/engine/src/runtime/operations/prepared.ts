import type {
  TaskConcurrency,
  TaskRate,
  WorkflowAttributes,
  WorkflowDefinition,
} from '@causeway/workflow/internal';
import type { TraceCarrier } from '../../db/schema';
import type { NewChildLink } from '../../db/submission/submission-insert';
import type { SubmitOrigin } from '../schedules/submit-origin';

/** A workflow checked for admission (R34), ready to be planned and written. */
export interface Prepared {
  readonly definition: WorkflowDefinition;
  readonly input: unknown;
  readonly inputJson: string;
  readonly idempotencyKey: string | null;
  /** The definition's debounce key of the input (R52); absent or null: not debounced. */
  readonly debounceKey?: string | null;
  /** Each step's concurrency slot (R50), in the definition's step order; absent: none. */
  readonly concurrency?: readonly (TaskConcurrency | null)[];
  /** What each step's claims spend of a rate limit (R51), in step order; absent: none. */
  readonly rate?: readonly (TaskRate | null)[];
  readonly origin?: SubmitOrigin | undefined;
  /** A child workflow's place in its tree (R43), with its id chosen before the insert. */
  readonly child?: { readonly id: string; readonly link: NewChildLink };
  /** The latest deadline its tasks may have, from acceptance: a parent's (R46); null: none. */
  readonly deadlineCapMs?: number | null;
  /** The submit's trace context, or the starting attempt's for a child (R57); null: none. */
  readonly traceContext?: TraceCarrier | null;
  /** Its searchable attributes (R55), merged at admission; absent or null: none. */
  readonly attributes?: WorkflowAttributes | null;
}
