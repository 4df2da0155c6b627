import type { CommandSpec } from '../command';
import { usageError } from '../exit-codes';
import { graphqlRequest } from '../graphql-client';

/** `purge`: retention (docs/retention.md), the API's purgeFinished. */

const unitMs: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** `30d`, `12h`, `90m`, `45s`, `500ms`: a whole number and one unit, in milliseconds. */
export function ageMs(text: string): number {
  const match = /^(\d+)(ms|s|m|h|d)$/.exec(text.trim());
  const value = match === null ? Number.NaN : Number(match[1]) * (unitMs[match[2] as string] ?? 0);
  if (!Number.isSafeInteger(value)) {
    throw usageError(
      `--older-than must be a whole number and a unit (ms, s, m, h, d), e.g. 30d; got "${text}"`,
    );
  }
  return value;
}

interface PurgeAnswer {
  dryRun: boolean;
  cutoffAt: string;
  workflowsRemoved: number;
  tasksRemoved: number;
  logRowsRemoved: number;
  eventsRemoved: number | null;
  deliveriesRemoved: number | null;
  versionsRemoved: number | null;
  partitionsDropped: { name: string; workflows: number; tasks: number; logRows: number }[];
  partitionsHeld: { name: string; message: string }[];
  defaultPartitionRows: number;
  runId: string | null;
}

const purge: CommandSpec = {
  name: 'purge',
  summary:
    'remove workflows that can no longer move, finished longer ago than an age, and unneeded events',
  args: [],
  options: {
    'older-than': {
      type: 'string',
      value: 'age',
      required: true,
      description: 'how long ago a workflow must have finished, e.g. 30d, 12h',
    },
    'dry-run': { type: 'boolean', description: 'count what would go; write nothing' },
    reason: {
      type: 'string',
      value: 'text',
      required: true,
      description: 'why, in your words: kept on the retention run',
    },
  },
  async run(invocation) {
    const olderThanMs = ageMs(invocation.requiredOption('older-than'));
    const data = await graphqlRequest<{ purgeFinished: PurgeAnswer }>(
      invocation.endpoint,
      `mutation CausewayPurge($age: Float!, $reason: String!, $dryRun: Boolean) {
        purgeFinished(olderThanMs: $age, reason: $reason, dryRun: $dryRun) {
          dryRun cutoffAt workflowsRemoved tasksRemoved logRowsRemoved eventsRemoved
          deliveriesRemoved versionsRemoved
          partitionsDropped { name workflows tasks logRows }
          partitionsHeld { name liveWorkflows youngWorkflows liveWorkflowIds youngWorkflowIds busy message }
          defaultPartitionRows runId
        }
      }`,
      {
        age: olderThanMs,
        reason: invocation.requiredOption('reason'),
        dryRun: invocation.flag('dry-run'),
      },
    );
    invocation.output.result(data, () => purgeText(data.purgeFinished));
    return undefined;
  },
};

function purgeText(answer: PurgeAnswer): string {
  const verb = answer.dryRun ? 'would remove' : 'removed';
  return [
    `${answer.dryRun ? 'dry run: ' : ''}${verb} ${answer.workflowsRemoved} workflows, ` +
      `${answer.tasksRemoved} tasks, ${answer.logRowsRemoved} log rows` +
      // A dry run does not count events: which go depends on the workflows removed first.
      (answer.eventsRemoved === null
        ? ' '
        : `, ${answer.eventsRemoved} events, ${answer.deliveriesRemoved} event deliveries, ` +
          `${answer.versionsRemoved} versions `) +
      `(finished before ${answer.cutoffAt})${answer.runId === null ? '' : `; run ${answer.runId}`}`,
    ...answer.partitionsDropped.map(
      (partition) =>
        `${answer.dryRun ? 'would drop' : 'dropped'} ${partition.name}: ${partition.workflows} workflows, ${partition.logRows} log rows`,
    ),
    ...answer.partitionsHeld.map((partition) => partition.message),
    ...(answer.defaultPartitionRows > 0
      ? [`${answer.defaultPartitionRows} log rows in the default partition are kept`]
      : []),
  ].join('\n');
}

export const purgeCommands: readonly CommandSpec[] = [purge];
