import type { TaskRecord } from '@causeway/engine';
import type { ApiContext } from '../context';
import type { ApiResolvers, Models } from '../models';
import { operatorOf, optionalReason, remembered } from './operator-mutations';

/**
 * Events (R37–R39, R42): the `sendEvent` mutation, the engine's `sendEvent` run as the operator
 * named by the verified token and remembered by clientMutationId (the engine's own
 * idempotency key covers repeats across processes); a task's wait and delivered events; an
 * event step's definition.
 */
export const eventMutationFields: Pick<ApiResolvers['Mutation'], 'sendEvent'> = {
  sendEvent: (_root, args, context) =>
    remembered(context, 'sendEvent', args, async () => {
      optionalReason(args.reason);
      const answer = await context.services.engine.sendEvent(args.name, args.key, args.payload, {
        operator: operatorOf(context),
        ...(args.idempotencyKey === null || args.idempotencyKey === undefined
          ? {}
          : { idempotencyKey: args.idempotencyKey }),
        ...(args.reason === null || args.reason === undefined ? {} : { reason: args.reason }),
      });
      return {
        clientMutationId: args.clientMutationId ?? null,
        eventId: answer.eventId,
        receivedAt: answer.receivedAt,
        deduplicated: answer.deduplicated,
        taskIds: answer.tasks.map((task) => task.taskId),
      };
    }),
};

/** Task fields of a wait: what it waits for, and the events it received. */
export const taskEventFields: Pick<ApiResolvers['Task'], 'waitingFor' | 'events'> = {
  waitingFor: (task) => waitingForOf(task),
  events: (task, _args, context) => context.loaders.eventsByTask.load(task.id),
};

export const stepEventFields: Pick<ApiResolvers['StepDefinition'], 'event'> = {
  event: (step) => step.event ?? null,
};

export const eventResolvers: Pick<
  ApiResolvers,
  'SendEventPayload' | 'WaitingFor' | 'Event' | 'EventStepDefinition'
> = {
  SendEventPayload: {
    tasks: (payload, _args, context) => tasksOf(context, payload.taskIds),
  },
  WaitingFor: {},
  Event: {},
  EventStepDefinition: {
    succeedsOnTimeout: (wait) => wait.onTimeout !== null,
    onTimeout: (wait) => (wait.onTimeout === null ? null : wait.onTimeout.output),
  },
};

/** The wait columns are set exactly while the task is `waiting` (0013_event_steps.sql). */
function waitingForOf(task: TaskRecord): Models['WaitingFor'] | null {
  if (
    task.state !== 'waiting' ||
    task.eventName === null ||
    task.waitSince === null ||
    task.waitTimeoutAt === null
  ) {
    return null;
  }
  return {
    name: task.eventName,
    key: task.eventKey,
    since: task.waitSince,
    timeoutAt: task.waitTimeoutAt,
  };
}

async function tasksOf(context: ApiContext, ids: readonly string[]): Promise<TaskRecord[]> {
  const tasks = await context.loaders.task.loadMany(ids);
  return tasks.map((task, index) => {
    if (task instanceof Error) throw task;
    if (task === null) throw new Error(`task ${ids[index]} vanished`);
    return task;
  });
}
