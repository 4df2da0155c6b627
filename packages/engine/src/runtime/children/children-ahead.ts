import { stepsWithWorkflowsRead } from '../../db/children/steps-read';
import type { Db } from '../../db/database';
import { submissionInsertStatement } from '../../db/submission/submission-insert';
import type { ApplyContext, EventRequest } from '../decision/event-request';
import { planSubmission } from '../operations/submit';
import { admitChildren } from './child-admission';

/**
 * Admits and plans the children of `startChildren` results before the transaction that writes
 * them (R43): checking thousands of inputs and planning their rows takes a while, and the
 * transaction holds the step's workflow locked until it commits. What the admission read is
 * read here without a lock; the decision uses the result only while the step still holds the
 * same lease in the same replay round and has no deadline (`ChildrenAhead`), and otherwise
 * admits them again under its locks. A result whose children are refused here is left to the
 * decision, which refuses them the same way.
 */
export async function childrenAdmittedAhead(
  db: Db,
  context: ApplyContext,
  requests: readonly EventRequest[],
): Promise<readonly EventRequest[]> {
  const asking = requests.filter(
    (request) =>
      request.extra?.children !== undefined && request.extra.children.ahead === undefined,
  );
  if (asking.length === 0) return requests;
  const loaded = await stepsWithWorkflowsRead(
    db,
    asking.map((request) => request.taskId),
  );
  return requests.map((request) => {
    const children = request.extra?.children;
    const task = loaded.tasks.find((candidate) => candidate.id === request.taskId);
    const workflow = loaded.workflows.find((candidate) => candidate.id === task?.workflowId);
    if (children === undefined || children.ahead !== undefined) return request;
    if (task === undefined || workflow === undefined || task.deadlineAt !== null) return request;
    if (request.fence === undefined || task.leaseEpoch !== request.fence.epoch) return request;
    const admitted = admitChildren(context.definitions, children, { workflow, task }, loaded.now);
    if (!admitted.ok) return request;
    const plan = planSubmission(admitted.start.children, { delayMs: 0, runAt: null });
    const ahead = {
      start: { ...admitted.start, planned: { plan, insert: submissionInsertStatement(plan) } },
      leaseEpoch: task.leaseEpoch,
      replayCount: task.replayCount,
    };
    return { ...request, extra: { ...request.extra, children: { ...children, ahead } } };
  });
}
