import { EngineError, type TaskAnswer } from '@causeway/engine';
import type { ApiContext } from '../context';
import { ApiError } from '../errors';
import type { ApiResolvers } from '../models';
import { eventMutationFields } from './events';
import { operatorOf, optionalReason, remembered } from './operator-mutations';
import { queueMutationFields } from './queues';
import { retentionMutationFields } from './retention';
import { scheduleMutationFields } from './schedules';

/**
 * Operator mutations: each is the engine's operation (never a re-implementation), run as the
 * operator named by the verified token. Repeats with the same clientMutationId get the first
 * answer (MutationMemo); the engine's own idempotency covers repeats without one.
 */
export const mutationResolvers: Pick<
  ApiResolvers,
  | 'Mutation'
  | 'SubmitWorkflowPayload'
  | 'SubmitDebounce'
  | 'CancelWorkflowPayload'
  | 'TaskOperationPayload'
  | 'TaskOperationResult'
  | 'RequeueDeadPayload'
> = {
  Mutation: {
    ...scheduleMutationFields,
    ...queueMutationFields,
    ...eventMutationFields,
    ...retentionMutationFields,
    submitWorkflow: (_root, args, context) =>
      remembered(context, 'submitWorkflow', args, async () => {
        const result = await context.services.engine.submit(args.name, args.input, {
          ...(args.idempotencyKey === null || args.idempotencyKey === undefined
            ? {}
            : { idempotencyKey: args.idempotencyKey }),
          // R49: the engine checks the range (invalid_priority) before anything is written.
          ...(args.priority === null || args.priority === undefined
            ? {}
            : { priority: args.priority }),
          // R55: the engine checks the attributes (invalid_attributes) before anything is written.
          ...(args.attributes === null || args.attributes === undefined
            ? {}
            : { attributes: args.attributes as Record<string, string | number | boolean> }),
          // R6: the client going away matters only until the insert commits.
          ...(context.signal === undefined ? {} : { signal: context.signal }),
        });
        return {
          clientMutationId: args.clientMutationId ?? null,
          workflowId: result.workflow.id,
          deduplicated: result.deduplicated,
          debounce: result.debounce ?? null,
        };
      }),
    cancelWorkflow: (_root, args, context) =>
      remembered(context, 'cancelWorkflow', args, async () => {
        optionalReason(args.reason);
        const answer = await context.services.engine.cancelWorkflow(args.id, {
          operator: operatorOf(context),
          ...(args.reason == null ? {} : { reason: args.reason }),
        });
        return {
          clientMutationId: args.clientMutationId ?? null,
          workflowId: answer.workflowId,
          state: answer.state,
          changed: answer.changed,
        };
      }),
    cancelTask: (_root, args, context) =>
      remembered(context, 'cancelTask', args, async () => {
        optionalReason(args.reason);
        const result = await context.services.engine.cancelTask(args.id, {
          operator: operatorOf(context),
          ...(args.reason == null ? {} : { reason: args.reason }),
        });
        return { clientMutationId: args.clientMutationId ?? null, result };
      }),
    replayTask: (_root, args, context) =>
      remembered(context, 'replayTask', args, async () => {
        const operator = operatorOf(context);
        try {
          const result = await context.services.engine.replayTask(args.id, {
            operator,
            reason: args.reason,
          });
          return { clientMutationId: args.clientMutationId ?? null, result };
        } catch (error) {
          const repeat = await repeatedReplay(context, error, args.id, operator, args.reason);
          if (repeat === null) throw error;
          return { clientMutationId: args.clientMutationId ?? null, result: repeat };
        }
      }),
    requeueDead: (_root, args, context) =>
      remembered(context, 'requeueDead', args, async () => {
        const results = await context.services.engine.requeueDead({
          reasonCode: args.reasonCode,
          from: args.from,
          to: args.to,
          operator: operatorOf(context),
          reason: args.reason,
        });
        return { clientMutationId: args.clientMutationId ?? null, results };
      }),
    recordReceipt: (_root, args, context) =>
      remembered(context, 'recordReceipt', args, async () => {
        operatorOf(context);
        if (args.outcome === 'rejected') {
          if (args.errorCategory === null || args.errorCategory === undefined) {
            throw new ApiError('BAD_USER_INPUT', 'a REJECTED receipt needs an errorCategory', {
              argument: 'errorCategory',
            });
          }
          const message = args.message ?? '';
          if (message.length > 1_000) {
            throw new ApiError('BAD_USER_INPUT', 'message is at most 1,000 characters', {
              argument: 'message',
            });
          }
          const result = await context.services.engine.recordReceipt(args.taskId, {
            ok: false,
            category: args.errorCategory,
            message,
          });
          return { clientMutationId: args.clientMutationId ?? null, result };
        }
        const result = await context.services.engine.recordReceipt(args.taskId, { ok: true });
        return { clientMutationId: args.clientMutationId ?? null, result };
      }),
  },
  SubmitWorkflowPayload: {
    workflow: (payload, _args, context) => present(context, payload.workflowId),
  },
  SubmitDebounce: {},
  CancelWorkflowPayload: {
    workflow: (payload, _args, context) => present(context, payload.workflowId),
  },
  TaskOperationPayload: {},
  TaskOperationResult: {
    task: async (answer, _args, context) => {
      const task = await context.loaders.task.load(answer.taskId);
      if (task === null) throw new Error(`task ${answer.taskId} vanished`);
      return task;
    },
  },
  RequeueDeadPayload: {},
};

async function present(context: ApiContext, workflowId: string) {
  const workflow = await context.loaders.workflow.load(workflowId);
  if (workflow === null) throw new Error(`workflow ${workflowId} vanished`);
  return workflow;
}

/**
 * A replay refused because the task is no longer dead is a repeat when this operator's latest
 * replay of it, with the same reason, is what took it out of `dead`: answer what that replay
 * answered (one transition, same answer), instead of CONFLICT.
 */
async function repeatedReplay(
  context: ApiContext,
  error: unknown,
  taskId: string,
  operator: string,
  reason: string,
): Promise<TaskAnswer | null> {
  if (!(error instanceof EngineError) || error.code !== 'conflict') return null;
  const rows = await context.services.readModel.transitionsByTaskIds([taskId]);
  const history = rows.get(taskId) ?? [];
  const lastDead = history.findLastIndex((row) => row.to === 'dead');
  const lastReplay = history.findLastIndex((row) => row.reason === 'manual_replay');
  const replay = history[lastReplay];
  if (
    replay === undefined ||
    lastReplay < lastDead ||
    replay.actor !== `operator:${operator}` ||
    replay.detail?.operatorReason !== reason.trim()
  ) {
    return null;
  }
  return { taskId, state: 'queued', changed: false, reason: 'manual_replay' };
}
