import type { ApiResolvers } from '../models';

/**
 * Concurrency keys (R50) where an operator looks: the `concurrencyGroups` query (the engine's
 * read) and each task's key.
 */
export const concurrencyQueryFields: Pick<ApiResolvers['Query'], 'concurrencyGroups'> = {
  concurrencyGroups: (_root, args, context) =>
    context.services.engine.concurrencyGroups({ keys: args.keys ?? undefined }),
};

export const taskConcurrencyFields: Pick<ApiResolvers['Task'], 'concurrency'> = {
  concurrency: (task) => task.concurrency ?? null,
};

export const concurrencyResolvers: Pick<
  ApiResolvers,
  'ConcurrencyGroup' | 'ConcurrencyKey' | 'ConcurrencySlotHolder' | 'TaskConcurrency'
> = {
  ConcurrencyGroup: { name: (group) => group.group },
  ConcurrencyKey: {},
  ConcurrencySlotHolder: { leaseHolder: (holder) => holder.holder },
  TaskConcurrency: {},
};
