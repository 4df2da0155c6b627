import { type CommandSpec, reasonOption } from '../command';
import { usageError } from '../exit-codes';
import { code, enumValue } from '../format';
import { graphqlRequest } from '../graphql-client';
import { table } from '../table';
import { type TaskResult, taskLine, taskResultFields, taskResultRefusal } from './task-results';

/** `replay` and `requeue-dead`: dead tasks back in the queue. */

const replay: CommandSpec = {
  name: 'replay',
  summary: 'put one dead task back in the queue (manual_replay)',
  args: [{ name: 'taskId', required: true }],
  options: { ...reasonOption },
  async run(invocation) {
    const data = await graphqlRequest<{ replayTask: { result: TaskResult } }>(
      invocation.endpoint,
      `mutation CausewayReplay($id: ID!, $reason: String!) {
        replayTask(id: $id, reason: $reason) { result { ${taskResultFields} } }
      }`,
      { id: invocation.requiredArg('taskId'), reason: invocation.requiredOption('reason') },
    );
    const { result } = data.replayTask;
    invocation.output.result(data, () => taskLine('replay', result));
    return taskResultRefusal(result);
  },
};

/** An instant given on the command line: ISO 8601, or `now`. */
function instantOption(value: string, option: string, now: Date): string {
  if (value === 'now') return now.toISOString();
  const at = new Date(value);
  if (Number.isNaN(at.getTime()) || !/^\d{4}-\d{2}-\d{2}/.test(value)) {
    throw usageError(
      `--${option} wants an ISO 8601 time such as 2025-06-01T12:00:00Z (got ${JSON.stringify(value)})`,
    );
  }
  return at.toISOString();
}

const requeueDead: CommandSpec = {
  name: 'requeue-dead',
  summary: 'requeue every dead task whose dead edge has a reason code, within a time window',
  args: [],
  options: {
    'reason-code': {
      type: 'string',
      value: 'code',
      required: true,
      description: "the dead edge's reason code, e.g. attempts_exhausted",
    },
    from: { type: 'string', value: 'time', required: true, description: 'window start, ISO 8601' },
    to: { type: 'string', value: 'time', description: 'window end, ISO 8601 (default now)' },
    ...reasonOption,
  },
  async run(invocation) {
    const now = invocation.now();
    const data = await graphqlRequest<{ requeueDead: { results: TaskResult[] } }>(
      invocation.endpoint,
      `mutation CausewayRequeueDead($code: ReasonCode!, $from: DateTime!, $to: DateTime!, $reason: String!) {
        requeueDead(reasonCode: $code, from: $from, to: $to, reason: $reason) { results { ${taskResultFields} } }
      }`,
      {
        code: enumValue(invocation.requiredOption('reason-code')),
        from: instantOption(invocation.requiredOption('from'), 'from', now),
        to: instantOption(invocation.option('to') ?? 'now', 'to', now),
        reason: invocation.requiredOption('reason'),
      },
    );
    const { results } = data.requeueDead;
    invocation.output.result(data, () =>
      results.length === 0
        ? 'requeued nothing: no dead task matches'
        : `requeued ${results.filter((result) => result.changed).length} of ${results.length}\n${table(
            ['TASK', 'STATE', 'REASON', 'REFUSAL'],
            results.map((result) => [
              result.taskId,
              invocation.output.style.state(code(result.state)),
              code(result.reason),
              result.refusal ?? '-',
            ]),
          )}`,
    );
    return results.some((result) => result.refusal !== null) ? 'refused' : undefined;
  },
};

export const taskCommands: readonly CommandSpec[] = [replay, requeueDead];
