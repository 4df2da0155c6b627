import type { ApiContext } from '../context';
import type { ApiResolvers } from '../models';
import { operatorOf, remembered } from './operator-mutations';

/**
 * Schedules (R40, R41): the `schedules` query and the operator mutations, each the engine's
 * operation run as the operator named by the verified token, remembered by clientMutationId.
 */
export const scheduleQueryFields: Pick<ApiResolvers['Query'], 'schedules'> = {
  schedules: (_root, _args, context) => context.services.engine.schedules(),
};

export const scheduleMutationFields: Pick<
  ApiResolvers['Mutation'],
  'pauseSchedule' | 'resumeSchedule' | 'triggerSchedule'
> = {
  pauseSchedule: (_root, args, context) =>
    remembered(context, 'pauseSchedule', args, async () => {
      const answer = await context.services.engine.pauseSchedule(args.name, {
        operator: operatorOf(context),
        reason: args.reason,
      });
      return { clientMutationId: args.clientMutationId ?? null, ...answer };
    }),
  resumeSchedule: (_root, args, context) =>
    remembered(context, 'resumeSchedule', args, async () => {
      const answer = await context.services.engine.resumeSchedule(args.name, {
        operator: operatorOf(context),
        reason: args.reason,
      });
      return { clientMutationId: args.clientMutationId ?? null, ...answer };
    }),
  triggerSchedule: (_root, args, context) =>
    remembered(context, 'triggerSchedule', args, async () => {
      const answer = await context.services.engine.triggerSchedule(args.name, {
        operator: operatorOf(context),
        reason: args.reason,
      });
      return {
        clientMutationId: args.clientMutationId ?? null,
        schedule: answer.schedule,
        workflowId: answer.workflow.id,
      };
    }),
};

export const scheduleResolvers: Pick<
  ApiResolvers,
  'Schedule' | 'ScheduleEvent' | 'SchedulePause' | 'SchedulePayload' | 'TriggerSchedulePayload'
> = {
  Schedule: {
    lastWorkflow: (schedule, _args, context) =>
      schedule.lastWorkflow === null
        ? null
        : context.loaders.workflow.load(schedule.lastWorkflow.id),
  },
  ScheduleEvent: {
    workflow: (event, _args, context) =>
      event.workflowId === null ? null : context.loaders.workflow.load(event.workflowId),
  },
  SchedulePause: {},
  SchedulePayload: {},
  TriggerSchedulePayload: {
    workflow: (payload, _args, context) => present(context, payload.workflowId),
  },
};

async function present(context: ApiContext, workflowId: string) {
  const workflow = await context.loaders.workflow.load(workflowId);
  if (workflow === null) throw new Error(`workflow ${workflowId} vanished`);
  return workflow;
}
