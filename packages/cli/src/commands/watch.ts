import type { CommandSpec, Invocation } from '../command';
import { CliError, usageError } from '../exit-codes';
import { clock, code, oneLine } from '../format';
import { graphqlRequest } from '../graphql-client';
import { isTerminal, progressBar, type TransitionRow, WorkflowProgress } from '../progress';
import { subscribe } from '../subscription';
import { workflowNotFound } from './workflows';

/**
 * `watch [<workflowId>]`: live transitions through the `transitions` subscription, one line
 * each with its workflow's progress bar. With an id it starts at the workflow's first
 * transition and ends once the workflow has ended (unless --follow); without one it shows
 * every workflow from now on until interrupted. `--after <transitionId>` resumes after a row.
 */

const rowFields =
  'id workflowId taskId step from to reason errorCategory errorSummary actor attempt at';

interface Snapshot {
  id: string;
  name: string;
  state: string;
  tasks: { id: string }[];
  transitions: { id: string; taskId: string | null; to: string }[];
}

async function snapshot(invocation: Invocation, id: string): Promise<Snapshot | null> {
  const data = await graphqlRequest<{ workflow: Snapshot | null }>(
    invocation.endpoint,
    `query CausewayWatchWorkflow($id: ID!) {
      workflow(id: $id) { id name state tasks { id } transitions { id taskId to } }
    }`,
    { id },
  );
  return data.workflow;
}

function render(row: TransitionRow, progress: WorkflowProgress, invocation: Invocation): string {
  const { style } = invocation.output;
  const edge = `${row.from === null ? '∅' : code(row.from)} → ${style.state(code(row.to))}`;
  const error =
    row.errorSummary === null
      ? ''
      : `  ${code(row.errorCategory)}: ${oneLine(row.errorSummary, 60)}`;
  return (
    [
      clock(row.at),
      `#${row.id}`.padEnd(7),
      row.workflowId.slice(0, 8),
      progress.name.padEnd(14),
      (row.step ?? '(workflow)').padEnd(12),
      edge.padEnd(style.enabled ? 0 : 28),
      code(row.reason).padEnd(24),
      progressBar(progress.done, progress.total),
      row.actor,
    ].join('  ') + error
  );
}

const watch: CommandSpec = {
  name: 'watch',
  summary: 'print transitions live, one line each, with a progress bar per workflow',
  args: [{ name: 'workflowId', required: false }],
  options: {
    after: {
      type: 'string',
      value: 'transitionId',
      description: 'start after this transition id (0: from the beginning of the log)',
    },
    follow: {
      type: 'boolean',
      description: 'with a workflow id: keep watching after the workflow has ended',
    },
  },
  async run(invocation) {
    const workflowId = invocation.arg('workflowId');
    const afterOption = invocation.option('after');
    if (afterOption !== undefined && !/^\d{1,19}$/.test(afterOption)) {
      throw usageError('--after wants a transition id (digits)');
    }
    const trackers = new Map<string, WorkflowProgress>();
    let after = afterOption ?? (workflowId === undefined ? undefined : '0');
    /** With an id: the last row the log had when watch started; the end is not before it. */
    let lastAtStart = 0n;
    if (workflowId !== undefined) {
      const start = await snapshot(invocation, workflowId);
      if (start === null) throw workflowNotFound(workflowId);
      lastAtStart = start.transitions.reduce(
        (max, row) => (BigInt(row.id) > max ? BigInt(row.id) : max),
        0n,
      );
      if (
        !invocation.flag('follow') &&
        isTerminal(start.state) &&
        BigInt(after ?? '0') >= lastAtStart
      ) {
        return undefined; // it has ended, and nothing after `after` is left to show
      }
    }
    const stop = new AbortController();
    const abort = () => stop.abort();
    invocation.signal.addEventListener('abort', abort, { once: true });

    const onRow = async ({ transitions: row }: { transitions: TransitionRow }) => {
      let progress = trackers.get(row.workflowId);
      if (progress === undefined) {
        const found = await snapshot(invocation, row.workflowId);
        const history = (found?.transitions ?? []).filter(
          (earlier) => BigInt(earlier.id) < BigInt(row.id),
        );
        progress = new WorkflowProgress(
          row.workflowId,
          found?.name ?? '?',
          (found?.tasks ?? []).map((task) => task.id),
          history,
        );
        trackers.set(row.workflowId, progress);
      }
      progress.apply(row);
      after = row.id;
      invocation.output.line(
        {
          transition: row,
          progress: {
            workflowId: row.workflowId,
            name: progress.name,
            done: progress.done,
            total: progress.total,
          },
        },
        render(row, progress, invocation),
      );
      const ended = row.taskId === null && isTerminal(row.to) && BigInt(row.id) >= lastAtStart;
      if (workflowId !== undefined && ended && !invocation.flag('follow')) stop.abort();
    };

    try {
      for (;;) {
        try {
          await subscribe(
            invocation.endpoint,
            `subscription CausewayWatch($workflowId: ID, $after: ID) {
              transitions(workflowId: $workflowId, after: $after) { ${rowFields} }
            }`,
            { workflowId: workflowId ?? null, after: after ?? null },
            onRow,
            stop.signal,
          );
          return undefined;
        } catch (error) {
          // A subscriber that fell behind resumes after the last row it printed: no gap.
          if (error instanceof CliError && error.code === 'SUBSCRIPTION_OVERFLOW') continue;
          throw error;
        }
      }
    } finally {
      invocation.signal.removeEventListener('abort', abort);
    }
  },
};

export const watchCommands: readonly CommandSpec[] = [watch];
