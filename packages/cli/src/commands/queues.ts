import type { CommandSpec, Invocation } from '../command';
import { usageError } from '../exit-codes';
import { instant } from '../format';
import { graphqlRequest } from '../graphql-client';
import { table } from '../table';
import {
  busiestKeysShown,
  type ConcurrencyGroupView,
  concurrencyGroupFields,
  concurrencyGroupTable,
} from './concurrency-groups';
import {
  busiestRateKeysShown,
  type RateLimitView,
  rateLimitFields,
  rateLimitTable,
} from './rate-limits';

/**
 * `queues` with the concurrency groups (R50) and rate limits (R51), and an operator's pause or resume of one (R53):
 * `queues pause <name> --reason`.
 */

const queueFields = 'name paused { operator reason pausedAt }';

export interface QueueView {
  name: string;
  paused: { operator: string; reason: string; pausedAt: string } | null;
}

async function list(invocation: Invocation): Promise<undefined> {
  const data = await graphqlRequest<{
    queues: QueueView[];
    concurrencyGroups: ConcurrencyGroupView[];
    rateLimits: RateLimitView[];
  }>(
    invocation.endpoint,
    `query CausewayQueues {
      queues { ${queueFields} }
      concurrencyGroups(keys: ${busiestKeysShown}) { ${concurrencyGroupFields} }
      rateLimits(keysPerLimit: ${busiestRateKeysShown}) { ${rateLimitFields} }
    }`,
  );
  const now = invocation.now();
  invocation.output.result(
    data,
    () =>
      `${queueTable(data.queues, now)}\n\n${concurrencyGroupTable(data.concurrencyGroups)}` +
      `\n\n${rateLimitTable(data.rateLimits)}`,
  );
  return undefined;
}

function queueTable(queues: readonly QueueView[], now: Date): string {
  return queues.length === 0
    ? 'no queues'
    : table(
        ['QUEUE', 'PAUSED', 'SINCE', 'BY', 'REASON'],
        queues.map((queue) =>
          queue.paused === null
            ? [queue.name, 'no', '-', '-', '-']
            : [
                queue.name,
                'yes',
                instant(queue.paused.pausedAt, now),
                queue.paused.operator,
                queue.paused.reason,
              ],
        ),
      );
}

async function pauseOrResume(invocation: Invocation, pause: boolean): Promise<undefined> {
  const mutation = pause ? 'pauseQueue' : 'resumeQueue';
  const reason = pause ? invocation.requiredOption('reason') : invocation.option('reason');
  const data = await graphqlRequest<
    Record<string, { changed: boolean; queue: QueueView } | undefined>
  >(
    invocation.endpoint,
    `mutation CausewayQueue($name: String!, $reason: String${pause ? '!' : ''}) {
      ${mutation}(name: $name, reason: $reason) { changed queue { ${queueFields} } }
    }`,
    { name: invocation.requiredArg('name'), reason: reason ?? null },
  );
  const answer = data[mutation];
  if (answer === undefined) throw new Error(`${mutation} answered nothing`);
  const verb = pause ? 'paused' : 'resumed';
  invocation.output.result(
    data,
    () =>
      `queue ${answer.queue.name} ${answer.changed ? verb : `was already ${verb}; nothing changed`}` +
      (answer.queue.paused === null
        ? ''
        : ` (by ${answer.queue.paused.operator}: ${answer.queue.paused.reason})`),
  );
  return undefined;
}

const queues: CommandSpec = {
  name: 'queues',
  summary:
    'every queue with its pause, every concurrency group and rate limit with its busiest keys; `queues pause <name> --reason <text>` and `queues resume <name>` stop and restart claims from one',
  args: [
    { name: 'action', required: false },
    { name: 'name', required: false },
  ],
  options: {
    reason: {
      type: 'string',
      value: 'text',
      description: 'why, in your words (required to pause): kept with the pause and its history',
    },
  },
  run(invocation) {
    const action = invocation.arg('action');
    if (action === undefined) return list(invocation);
    if (action === 'pause' || action === 'resume') {
      return pauseOrResume(invocation, action === 'pause');
    }
    throw usageError(`queues takes pause or resume, not ${JSON.stringify(action)}`);
  },
};

export const queueCommands: readonly CommandSpec[] = [queues];
