import type { TaskState } from '@causeway/workflow';

/** A task an event completed, as it is after the send. */
export interface DeliveredTask {
  readonly taskId: string;
  readonly workflowId: string;
  readonly step: string;
  readonly state: TaskState;
}

export interface SendEventAnswer {
  readonly eventId: string;
  readonly receivedAt: Date;
  /** True when an event with this idempotency key was stored before: nothing was written. */
  readonly deduplicated: boolean;
  /** The tasks the event completed (for a repeat: so far, at its send or later). */
  readonly tasks: readonly DeliveredTask[];
}
