/**
 * Priority (R49) in the CLI: `causeway submit --priority N` gives every task of the workflow
 * that priority, `status` shows it in its table and `--json`, `explain` says what the task
 * jumps; a priority out of range or not a whole number exits 2 and writes nothing.
 */
import { describe, expect, it } from 'vitest';
import { query } from '../helpers/engine';
import { causeway, causewayJson, useCli } from './helpers';

const { url, db, asAlice } = useCli();

/** How many workflows, tasks and log rows the database holds. */
async function written(): Promise<string> {
  const [row] = await query<{ print: string }>(
    db(),
    `select concat_ws('|', (select count(*) from causeway_workflows),
       (select count(*) from causeway_tasks), (select count(*) from causeway_transitions)) as print`,
  );
  return row?.print as string;
}

describe('causeway submit --priority', () => {
  it('stores the priority on every task; status and explain show it', async () => {
    // cli-stranded's only step is on a queue no worker serves: it stays queued.
    const submitted = await causeway([
      'submit',
      'cli-stranded',
      '--input',
      '{"label":"priority-1"}',
      '--priority',
      '120',
      ...asAlice(),
    ]);
    expect(submitted.code).toBe(0);
    const id = /^submitted (\S+) \(cli-stranded\): queued$/.exec(submitted.stdout.trim())?.[1];
    if (id === undefined) throw new Error(`no id in ${submitted.stdout}`);
    const rows = await query<{ priority: number }>(
      db(),
      'select priority from causeway_tasks where workflow_id = $1',
      [id],
    );
    expect(rows).toEqual([{ priority: 120 }]);

    const status = await causeway(['status', id, '--url', url()]);
    expect(status.code).toBe(0);
    const header = status.stdout.split('\n').findIndex((line) => line.startsWith('STEP'));
    const [orphan] = status.stdout
      .split('\n')
      .slice(header + 1)
      .map((line) => line.split(/ {2,}/));
    expect(orphan?.[0]).toBe('orphan');
    expect(orphan?.[2]).toBe('queued');
    expect(orphan?.[4]).toBe('120 s');
    const json = await causewayJson<{ workflow: { tasks: { priority: number }[] } }>([
      'status',
      id,
      '--url',
      url(),
    ]);
    expect(json.json.workflow.tasks.map((task) => task.priority)).toEqual([120]);

    const explained = await causeway(['explain', id, '--url', url()]);
    expect(explained.code).toBe(0);
    expect(explained.stdout).toMatch(
      /^orphan: priority 120 s: jumps \d+ older queued tasks? of queue "nowhere"$/m,
    );
  });

  it('takes a negative priority as --priority=-N', async () => {
    const run = await causewayJson<{ submitWorkflow: { workflow: { id: string } } }>([
      'submit',
      'cli-stranded',
      '--input',
      '{"label":"priority-2"}',
      '--priority=-30',
      ...asAlice(),
    ]);
    expect(run.code).toBe(0);
    const rows = await query<{ priority: number }>(
      db(),
      'select priority from causeway_tasks where workflow_id = $1',
      [run.json.submitWorkflow.workflow.id],
    );
    expect(rows).toEqual([{ priority: -30 }]);
  });

  it.each([
    {
      value: '86401',
      code: 'BAD_USER_INPUT',
      message: /priority must be an integer number of seconds from -86400 to 86400, got 86401/,
    },
    { value: '-86401', code: 'BAD_USER_INPUT', message: /from -86400 to 86400, got -86401/ },
    {
      value: '1.5',
      code: 'USAGE',
      message: /--priority must be a whole number of seconds, got 1.5/,
    },
    {
      value: 'soon',
      code: 'USAGE',
      message: /--priority must be a whole number of seconds, got soon/,
    },
  ])('refuses --priority=$value with $code, exit 2, and writes nothing', async (item) => {
    const before = await written();
    const run = await causewayJson<{ error: { code: string; exitCode: number; message: string } }>([
      'submit',
      'cli-stranded',
      '--input',
      '{"label":"priority-bad"}',
      `--priority=${item.value}`,
      ...asAlice(),
    ]);
    expect(run.code).toBe(2);
    expect(run.json.error).toMatchObject({ code: item.code, exitCode: 2 });
    expect(run.json.error.message).toMatch(item.message);
    expect(await written()).toBe(before);
  });
});
