import type { ApiResolvers } from '../models';
import { operatorOf, remembered } from './operator-mutations';

/**
 * Queues (R53): the `queues` query and the pause and resume mutations, each the engine's
 * operation run as the operator named by the verified token, remembered by clientMutationId.
 */
export const queueQueryFields: Pick<ApiResolvers['Query'], 'queues'> = {
  queues: (_root, _args, context) => context.services.engine.queues(),
};

export const queueMutationFields: Pick<ApiResolvers['Mutation'], 'pauseQueue' | 'resumeQueue'> = {
  pauseQueue: (_root, args, context) =>
    remembered(context, 'pauseQueue', args, async () => {
      const answer = await context.services.engine.pauseQueue(args.name, {
        operator: operatorOf(context),
        reason: args.reason,
      });
      return { clientMutationId: args.clientMutationId ?? null, ...answer };
    }),
  resumeQueue: (_root, args, context) =>
    remembered(context, 'resumeQueue', args, async () => {
      const answer = await context.services.engine.resumeQueue(args.name, {
        operator: operatorOf(context),
        ...(args.reason == null ? {} : { reason: args.reason }),
      });
      return { clientMutationId: args.clientMutationId ?? null, ...answer };
    }),
};

export const queueResolvers: Pick<
  ApiResolvers,
  'Queue' | 'QueuePause' | 'QueuePauseEvent' | 'QueuePayload'
> = {
  Queue: {},
  QueuePause: {},
  QueuePauseEvent: {},
  QueuePayload: {},
};
