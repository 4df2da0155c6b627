/**
 * `causeway watch` prints a running workflow's transitions as they commit, one line each in
 * log order with its workflow's progress bar: compared line by line with the transition log
 * read from the database, the progress recomputed from that log.
 */
import { describe, expect, it } from 'vitest';
import { data } from '../api/helpers';
import type { LogRow } from '../engine/semantics-support';
import { query } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import {
  aliceToken,
  causeway,
  startCauseway,
  storedTasks,
  submitted,
  useCli,
  workflowReaches,
} from './helpers';

const { url, db } = useCli();

async function logAfter(after: string, workflowIds: readonly string[]): Promise<LogRow[]> {
  return query<LogRow>(
    db(),
    'select * from causeway_transitions where id > $1 and workflow_id = any($2::uuid[]) order by id',
    [after, workflowIds],
  );
}

/** Each row's workflow progress after it: tasks in a terminal state, out of the workflow's tasks. */
async function progressAfterEach(rows: readonly LogRow[]): Promise<string[]> {
  const states = new Map<string, Map<string, string>>();
  const totals = new Map<string, number>();
  for (const id of new Set(rows.map((row) => row.workflow_id))) {
    const tasks = await storedTasks(db(), id);
    totals.set(id, tasks.length);
    const before = await query<{ task_id: string; to_state: string }>(
      db(),
      `select task_id::text, to_state from causeway_transitions
        where workflow_id = $1 and task_id is not null and id < $2 order by id`,
      [id, rows.find((row) => row.workflow_id === id)?.id],
    );
    states.set(id, new Map(before.map((row) => [row.task_id, row.to_state])));
  }
  return rows.map((row) => {
    const tasks = states.get(row.workflow_id) as Map<string, string>;
    if (row.task_id !== null) tasks.set(row.task_id, row.to_state);
    const done = [...tasks.values()].filter((state) =>
      ['succeeded', 'cancelled', 'dead'].includes(state),
    ).length;
    return `${done}/${totals.get(row.workflow_id)}`;
  });
}

const line =
  /^\d{2}:\d{2}:\d{2}\.\d{3}Z +#(\d+) +([0-9a-f]{8}) +(\S+) +(\S+) +(\S+) → (\S+) +(\S+) +\[[#-]{10}\] (\d+\/\d+) +(\S+)/;

/** A human line as [id, workflow prefix, name, step, from, to, reason, progress, actor]. */
function parseLine(text: string): string[] {
  const match = line.exec(text);
  if (match === null) throw new Error(`not a watch line: ${JSON.stringify(text)}`);
  return match.slice(1);
}

function expectedLine(row: LogRow, progress: string): string[] {
  return [
    row.id,
    row.workflow_id.slice(0, 8),
    'cli-staged',
    row.step ?? '(workflow)',
    row.from_state ?? '∅',
    row.to_state,
    row.reason,
    progress,
    row.actor,
  ];
}

async function approve(label: string): Promise<void> {
  await data(
    url(),
    'mutation ($key: String!) { sendEvent(name: "cli.approved", key: $key, payload: { by: "ada" }) { eventId } }',
    { token: aliceToken, variables: { key: label } },
  );
}

describe('causeway watch <workflowId>', () => {
  it("prints a running workflow's transitions in log order with its progress, and ends when it ends", async () => {
    const id = await submitted(url(), 'cli-staged', { label: 'watch-1' });
    await workflowReaches(db(), id, 'waiting'); // running, and stopped at its event step
    const watch = startCauseway(['watch', id, '--url', url()]);
    // Its history so far is printed first, up to the wait.
    await waitFor(() => / event_awaited /.test(watch.stdout()), {
      timeoutMs: 30_000,
      description: 'watch printed the wait',
    });
    await approve('watch-1');
    expect(await watch.exited).toBe(0);
    expect(watch.stderr()).toBe('');

    const rows = await logAfter('0', [id]);
    expect(rows.map((row) => row.reason)).toContain('event_received');
    expect(rows.at(-1)).toMatchObject({ task_id: null, to_state: 'succeeded' });
    const progress = await progressAfterEach(rows);
    const printed = watch.stdout().trimEnd().split('\n').map(parseLine);
    expect(printed).toEqual(rows.map((row, index) => expectedLine(row, progress[index] as string)));
    expect(printed.at(-1)?.[7]).toBe('3/3');
  });

  it('prints the whole history of a workflow that has ended, and exits at once', async () => {
    const id = await submitted(url(), 'cli-staged', { label: 'watch-2' });
    await workflowReaches(db(), id, 'waiting');
    await approve('watch-2');
    await workflowReaches(db(), id, 'succeeded');
    const run = await causeway(['watch', id, '--url', url()]);
    expect(run.code).toBe(0);
    const rows = await logAfter('0', [id]);
    const progress = await progressAfterEach(rows);
    expect(run.stdout.trimEnd().split('\n').map(parseLine)).toEqual(
      rows.map((row, index) => expectedLine(row, progress[index] as string)),
    );
  });
});

describe('causeway watch --json', () => {
  it('streams every workflow after a transition id as JSON lines until interrupted', async () => {
    const [last] = await query<{ id: string }>(
      db(),
      'select coalesce(max(id), 0)::text as id from causeway_transitions',
    );
    const after = last?.id ?? '0';
    const watch = startCauseway(['watch', '--after', after, '--json', '--url', url()]);
    const ids = [
      await submitted(url(), 'cli-staged', { label: 'watch-3' }),
      await submitted(url(), 'cli-staged', { label: 'watch-4' }),
    ];
    for (const id of ids) await workflowReaches(db(), id, 'waiting');
    await approve('watch-3');
    await approve('watch-4');
    for (const id of ids) await workflowReaches(db(), id, 'succeeded');
    const rows = await logAfter(after, ids);
    await waitFor(() => watch.stdout().trimEnd().split('\n').length >= rows.length, {
      timeoutMs: 30_000,
      description: `watch printed ${rows.length} lines`,
    });
    watch.signal('SIGINT');
    expect(await watch.exited).toBe(0); // Ctrl-C ends a watch normally

    const printed = watch
      .stdout()
      .trimEnd()
      .split('\n')
      .map((text) => JSON.parse(text));
    const progress = await progressAfterEach(rows);
    const upper = (value: string | null) => (value === null ? null : value.toUpperCase());
    expect(printed).toEqual(
      rows.map((row, index) => ({
        transition: {
          id: row.id,
          workflowId: row.workflow_id,
          taskId: row.task_id,
          step: row.step,
          from: upper(row.from_state),
          to: upper(row.to_state),
          reason: upper(row.reason),
          errorCategory: null,
          errorSummary: null,
          actor: row.actor,
          attempt: expect.any(Number),
          at: expect.any(String),
        },
        progress: {
          workflowId: row.workflow_id,
          name: 'cli-staged',
          done: Number(progress[index]?.split('/')[0]),
          total: 3,
        },
      })),
    );
  });
});
