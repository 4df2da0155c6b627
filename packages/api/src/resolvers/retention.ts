import type { ApiResolvers } from '../models';
import { operatorOf, remembered } from './operator-mutations';

/**
 * Retention's operator mutation: the engine's `purgeFinished` run as the operator of the
 * verified token, remembered by clientMutationId. The engine checks the age and the reason.
 */
export const retentionMutationFields: Pick<ApiResolvers['Mutation'], 'purgeFinished'> = {
  purgeFinished: (_root, args, context) =>
    remembered(context, 'purgeFinished', args, async () => {
      const answer = await context.services.engine.purgeFinished({
        olderThanMs: args.olderThanMs,
        operator: operatorOf(context),
        reason: args.reason,
        dryRun: args.dryRun ?? false,
      });
      return {
        clientMutationId: args.clientMutationId ?? null,
        dryRun: answer.dryRun,
        cutoffAt: answer.cutoffAt,
        workflowsRemoved: answer.workflowsRemoved,
        tasksRemoved: answer.tasksRemoved,
        logRowsRemoved: answer.logRowsRemoved,
        eventsRemoved: answer.eventsRemoved,
        deliveriesRemoved: answer.deliveriesRemoved,
        versionsRemoved: answer.versionsRemoved,
        partitionsDropped: answer.partitionsDropped,
        partitionsHeld: answer.partitionsHeld.map(({ liveSample, youngSample, ...held }) => ({
          ...held,
          liveWorkflowIds: liveSample,
          youngWorkflowIds: youngSample,
        })),
        defaultPartitionRows: answer.defaultPartition.rows,
        runId: answer.runId,
      };
    }),
};

/** The payload's types resolve from their models' fields as they are. */
export const retentionResolvers: Pick<
  ApiResolvers,
  'DroppedPartition' | 'HeldPartition' | 'PurgeFinishedPayload'
> = {
  DroppedPartition: {},
  HeldPartition: {},
  PurgeFinishedPayload: {},
};
