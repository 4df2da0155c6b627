import { ApiError } from '../errors';
import type { ApiResolvers } from '../models';

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Live transitions from the LISTEN-fed log reader (see TransitionFeed). */
export const subscriptionResolvers: Pick<ApiResolvers, 'Subscription'> = {
  Subscription: {
    transitions: {
      async subscribe(_root, args, context) {
        const workflowId = args.workflowId ?? undefined;
        if (workflowId !== undefined) {
          const workflow = uuid.test(workflowId)
            ? await context.loaders.workflow.load(workflowId)
            : null;
          if (workflow === null) {
            throw new ApiError(
              'NOT_FOUND',
              `no workflow has the id ${JSON.stringify(workflowId)}`,
              {
                argument: 'workflowId',
              },
            );
          }
        }
        let after: bigint | undefined;
        if (args.after !== null && args.after !== undefined) {
          if (!/^\d{1,19}$/.test(args.after)) {
            throw new ApiError('BAD_USER_INPUT', '`after` must be a transition id', {
              argument: 'after',
            });
          }
          after = BigInt(args.after);
        }
        return context.services.feed.subscribe({
          ...(workflowId === undefined ? {} : { workflowId }),
          ...(after === undefined ? {} : { after }),
        });
      },
      resolve: (row) => row,
    },
  },
};
