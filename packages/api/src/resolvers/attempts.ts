import { mayHaveStaleResults, taskAttempts } from '@causeway/workflow/internal';
import type { ApiResolvers } from '../models';

/**
 * A task's attempts (R56), from its workflow's log (the read `transitions` batches) and, when
 * the log leaves room for one, its refused late results (one more batched read for a page).
 */
export const taskAttemptFields: Pick<ApiResolvers['Task'], 'attempts'> = {
  attempts: async (task, _args, context) => {
    const transitions = await context.loaders.transitionsByWorkflow.load(task.workflowId);
    const stale = mayHaveStaleResults(transitions, task.id)
      ? await context.loaders.staleResultsByWorkflow.load(task.workflowId)
      : [];
    return taskAttempts(task.id, transitions, stale);
  },
};

export const attemptResolvers: Pick<ApiResolvers, 'Attempt'> = { Attempt: {} };
