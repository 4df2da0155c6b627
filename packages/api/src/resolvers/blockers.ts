import type { ApiResolvers } from '../models';

/**
 * Blockers and the worker registry (issue 18). A workflow's blockers come from one batched
 * read per request (`blockersByWorkflow`), so a page of workflows, or every task of one, costs
 * the same few statements; a task's blocker is its entry in its workflow's list.
 */
export const blockerQueryFields: Pick<ApiResolvers['Query'], 'workers'> = {
  workers: (_root, args, context) =>
    context.reads.workers({ includeStale: args.includeStale === true }),
};

export const workflowBlockerFields: Pick<ApiResolvers['Workflow'], 'blockers'> = {
  blockers: (workflow, _args, context) => context.loaders.blockersByWorkflow.load(workflow.id),
};

export const taskBlockerFields: Pick<ApiResolvers['Task'], 'blocker'> = {
  blocker: async (task, _args, context) =>
    (await context.loaders.blockersByWorkflow.load(task.workflowId)).find(
      (blocker) => blocker.taskId === task.id,
    ) ?? null,
};

export const blockerResolvers: Pick<
  ApiResolvers,
  'Blocker' | 'Worker' | 'WorkerQueue' | 'WorkerWorkflow'
> = {
  Blocker: {},
  Worker: {},
  WorkerQueue: {},
  // A row of an engine from before versions (R54) says nothing of its latest.
  WorkerWorkflow: { latest: (workflow) => workflow.latest === true },
};
