import { workflowResult } from '@causeway/engine';
import { workflowStates } from '@causeway/workflow';
import { decodeChildCursor, encodeChildCursor } from '../child-cursor';
import type { ApiContext } from '../context';
import type { ApiResolvers } from '../models';
import { connectionOf, pageSizeOf, textArgument } from './workflow-connection';

/**
 * The tree (R48): a workflow's parent, its children a page at a time, its steps' child counts
 * and its result. Links resolve through the per-request loaders, so a page of children with
 * their parents costs a fixed number of statements; each `children` connection is one page
 * read (and its count, when asked), costed like a list by the query limits.
 */
export const workflowTreeFields: Pick<
  ApiResolvers['Workflow'],
  'parent' | 'children' | 'childCounts' | 'result'
> = {
  parent: (workflow) => workflow.parent,
  children: async (workflow, args, context) => {
    const first = pageSizeOf(args.first, context);
    const step = textArgument('step', args.step);
    const filter = {
      ...(args.state === null || args.state === undefined ? {} : { states: args.state }),
      ...(step === null ? {} : { step }),
    };
    const after =
      args.after === null || args.after === undefined ? null : decodeChildCursor(args.after);
    const page = await context.reads.childPage(workflow.id, filter, {
      after,
      limit: Math.max(first, 1),
    });
    return connectionOf(
      page,
      first,
      encodeChildCursor,
      (atMost) => context.reads.childCount(workflow.id, filter, atMost),
      context,
    );
  },
  childCounts: (workflow, _args, context) =>
    context.loaders.childCountsByWorkflow.load(workflow.id),
  result: async (workflow, _args, context) =>
    workflow.state === 'succeeded'
      ? workflowResult(
          workflow,
          await context.loaders.tasksByWorkflow.load(workflow.id),
          context.services.definitions,
        )
      : null,
};

async function required<T>(value: Promise<T | null>, what: string): Promise<T> {
  const found = await value;
  if (found === null) throw new Error(`${what} is missing`);
  return found;
}

export const treeResolvers: Pick<
  ApiResolvers,
  'WorkflowParent' | 'StepChildCounts' | 'WorkflowStateCount'
> = {
  WorkflowParent: {
    workflow: (link, _args, context: ApiContext) =>
      required(
        context.loaders.workflow.load(link.workflowId),
        `parent workflow ${link.workflowId}`,
      ),
    task: (link, _args, context) =>
      required(context.loaders.task.load(link.taskId), `parent task ${link.taskId}`),
    step: async (link, _args, context) =>
      (await required(context.loaders.task.load(link.taskId), `parent task ${link.taskId}`)).step,
    root: (link, _args, context) =>
      required(context.loaders.workflow.load(link.rootId), `root workflow ${link.rootId}`),
  },
  StepChildCounts: {
    task: (counts, _args, context) =>
      required(context.loaders.task.load(counts.taskId), `task ${counts.taskId}`),
    byState: (counts) => workflowStates.map((state) => ({ state, count: counts.byState[state] })),
  },
  WorkflowStateCount: {},
};
