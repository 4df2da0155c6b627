/**
 * `causeway submit`, `status`, `explain`, `send-event` and `cancel`, each run as a child
 * process against a server in another process: what it prints for people, its `--json`
 * shape, its exit code, and what it changed in the database.
 */
import { describe, expect, it } from 'vitest';
import { data } from '../api/helpers';
import { query } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { causeway, causewayJson, storedTasks, submitted, useCli, workflowReaches } from './helpers';

const { url, db, asAlice, holder } = useCli();

/** The rows of a human table: each line split on runs of two or more spaces. */
function tableRows(text: string, header: string): string[][] {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => line.startsWith(header));
  expect(start).toBeGreaterThanOrEqual(0);
  return lines
    .slice(start + 1)
    .filter((line) => line.trim() !== '')
    .map((line) => line.split(/ {2,}/));
}

describe('causeway submit', () => {
  it('admits a workflow and prints its id; the same idempotency key answers the same workflow', async () => {
    const args = [
      'submit',
      'cli-staged',
      '--input',
      '{"label":"submit-1"}',
      '--idempotency-key',
      'cli-submit-1',
      ...asAlice(),
    ];
    const first = await causeway(args);
    expect(first.code).toBe(0);
    // The worker may take the first step before the answer reads the workflow back.
    const id = /^submitted (\S+) \(cli-staged\): (queued|running|waiting)$/.exec(
      first.stdout.trim(),
    )?.[1];
    expect(id).toBeDefined();
    const rows = await query<{ name: string; input: unknown }>(
      db(),
      'select name, input from causeway_workflows where id = $1',
      [id],
    );
    expect(rows).toEqual([{ name: 'cli-staged', input: { label: 'submit-1' } }]);

    const repeat = await causewayJson(args);
    expect(repeat.code).toBe(0);
    expect(repeat.json).toEqual({
      submitWorkflow: {
        deduplicated: true,
        workflow: { id, name: 'cli-staged', state: expect.any(String) },
        debounce: null,
      },
    });
  });

  it('a debounced submit names the workflow it superseded; explain and the API show the superseded reason (R52)', async () => {
    const args = ['submit', 'cli-debounced', '--input', '{"label":"debounce-1"}', ...asAlice()];
    const first = await causewayJson<{
      submitWorkflow: { workflow: { id: string }; debounce: { superseded: string[] } };
    }>(args);
    expect(first.code).toBe(0);
    const firstId = first.json.submitWorkflow.workflow.id;
    expect(first.json.submitWorkflow.debounce.superseded).toEqual([]);
    const second = await causeway(args);
    expect(second.code).toBe(0);
    const line = second.stdout.trim();
    expect(line).toMatch(
      new RegExp(`^submitted (\\S+) \\(cli-debounced\\): queued, due \\S+; superseded ${firstId}$`),
    );
    const secondId = /^submitted (\S+) /.exec(line)?.[1] as string;
    const explained = await causeway(['explain', firstId, '--url', url()]);
    expect(explained.code).toBe(0);
    expect(explained.stdout).toContain(`superseded by workflow ${secondId}`);
    // The API's log: the task's edge and the workflow's, in the ReasonCode enum, by the client.
    const log = await data<{
      workflow: {
        transitions: { taskId: string | null; to: string; reason: string; actor: string }[];
      };
    }>(url(), 'query ($id: ID!) { workflow(id: $id) { transitions { taskId to reason actor } } }', {
      variables: { id: firstId },
    });
    const superseded = log.workflow.transitions.filter((row) => row.reason === 'SUPERSEDED');
    expect(superseded.map((row) => [row.taskId === null, row.to, row.actor])).toEqual([
      [false, 'CANCELLED', 'client'],
      [true, 'CANCELLED', 'client'],
    ]);
  });
});

describe('causeway status', () => {
  it('shows the parent and a table of its children with state, attempt, priority, next run, holder and last error', async () => {
    const waiting = await submitted(url(), 'cli-staged', { label: 'status-1' });
    const doomed = await submitted(url(), 'doomed', { label: 'status-2' });
    const leased = await submitted(url(), 'slow', { label: 'status-3' });
    const stranded = await submitted(url(), 'cli-stranded', { label: 'status-4' });
    await workflowReaches(db(), waiting, 'waiting');
    await workflowReaches(db(), doomed, 'dead');
    await waitFor(
      async () => (await storedTasks(db(), leased)).every((task) => task.state === 'leased'),
      { timeoutMs: 30_000, description: 'the slow step leased' },
    );

    const staged = await causeway(['status', waiting, '--url', url()]);
    expect(staged.code).toBe(0);
    expect(staged.stdout).toMatch(
      new RegExp(`^workflow: +${waiting} {2}cli-staged {2}waiting$`, 'm'),
    );
    const tasks = await storedTasks(db(), waiting);
    const byStep = (rows: string[][]) => new Map(rows.map((row) => [row[0], row]));
    expect(staged.stdout).toMatch(
      /^STEP +TASK +STATE +ATTEMPT +PRIORITY +NEXT RUN +HOLDER +LAST ERROR$/m,
    );
    const stagedRows = byStep(tableRows(staged.stdout, 'STEP'));
    expect([...stagedRows.keys()]).toEqual(['prepare', 'approval', 'finish']);
    for (const task of tasks)
      expect(stagedRows.get(task.step)?.slice(1, 3)).toEqual([task.id, task.state]);
    expect(stagedRows.get('prepare')?.slice(3)).toEqual(['1/5', '-', '-', '-', '-']);

    const dead = await causeway(['status', doomed, '--url', url()]);
    const [charge] = tableRows(dead.stdout, 'STEP');
    expect(charge?.slice(2)).toEqual([
      'dead',
      '1/1',
      '-',
      '-',
      '-',
      'invalid_argument: card declined',
    ]);

    const running = await causeway(['status', leased, '--url', url()]);
    const [wait] = tableRows(running.stdout, 'STEP');
    expect(wait?.slice(2)).toEqual(['leased', '1/3', '-', '-', holder(), '-']);

    const queued = await causeway(['status', stranded, '--url', url()]);
    const [orphan] = tableRows(queued.stdout, 'STEP');
    const [runAt] = await query<{ run_at: Date }>(
      db(),
      'select run_at from causeway_tasks where workflow_id = $1',
      [stranded],
    );
    expect(orphan?.[2]).toBe('queued');
    expect(orphan?.[5]).toMatch(
      new RegExp(`^${runAt?.run_at.toISOString().slice(0, 19)}Z \\((in \\S+|\\S+ ago)\\)$`),
    );
  });

  it('--json prints the workflow with its tasks, as the API spells them', async () => {
    const id = await submitted(url(), 'doomed', { label: 'status-json' });
    await workflowReaches(db(), id, 'dead');
    const { code, json } = await causewayJson(['status', id, '--url', url()]);
    expect(code).toBe(0);
    const [task] = await storedTasks(db(), id);
    expect(json).toEqual({
      workflow: {
        id,
        name: 'doomed',
        state: 'DEAD',
        idempotencyKey: null,
        attributes: {},
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        tasks: [
          {
            id: task?.id,
            step: 'charge',
            queue: 'default',
            state: 'DEAD',
            attempt: 1,
            maxAttempts: 1,
            priority: 0,
            runAt: null,
            leaseHolder: null,
            leaseExpiresAt: null,
            lastErrorCategory: 'INVALID_ARGUMENT',
            lastError: 'card declined',
          },
        ],
        // A root that started no child workflow (test/cli/tree.test.ts shows a tree).
        parent: null,
        childCounts: [],
      },
    });
  });
});

describe('causeway explain', () => {
  it("prints the workflow's narrative, the API's explanation", async () => {
    const id = await submitted(url(), 'doomed', { label: 'explain' });
    await workflowReaches(db(), id, 'dead');
    const expected = await data<{ workflow: { explanation: string } }>(
      url(),
      'query ($id: ID!) { workflow(id: $id) { explanation } }',
      { variables: { id } },
    );
    const human = await causeway(['explain', id, '--url', url()]);
    expect(human.code).toBe(0);
    expect(human.stdout).toBe(`${expected.workflow.explanation}\n`);
    expect(human.stdout).toContain('charge');
    const { json } = await causewayJson(['explain', id, '--url', url()]);
    expect(json).toEqual({
      workflow: { id, state: 'DEAD', explanation: expected.workflow.explanation },
    });
  });
});

describe('causeway send-event', () => {
  it('completes the step waiting for its name and key with the reason; --json lists the tasks it completed', async () => {
    const id = await submitted(url(), 'cli-staged', { label: 'event-1' });
    await workflowReaches(db(), id, 'waiting');
    const { code, json } = await causewayJson([
      'send-event',
      'cli.approved',
      'event-1',
      '--payload',
      '{"by":"ada"}',
      '--reason',
      'proofread twice',
      ...asAlice(),
    ]);
    expect(code).toBe(0);
    const approval = (await storedTasks(db(), id)).find((task) => task.step === 'approval');
    expect(json).toEqual({
      sendEvent: {
        eventId: expect.any(String),
        receivedAt: expect.any(String),
        deduplicated: false,
        tasks: [{ id: approval?.id, workflowId: id, step: 'approval', state: 'SUCCEEDED' }],
      },
    });
    await workflowReaches(db(), id, 'succeeded');
    const stored = await query<{ actor: string; reason: string }>(
      db(),
      `select actor, detail->>'operatorReason' as reason from causeway_transitions
        where task_id = $1 and reason = 'event_received'`,
      [approval?.id],
    );
    expect(stored).toEqual([{ actor: 'operator:alice', reason: 'proofread twice' }]);
    const event = await query<{ sent_by: string; reason: string }>(
      db(),
      'select sent_by, reason from causeway_events where id = $1',
      [(json as { sendEvent: { eventId: string } }).sendEvent.eventId],
    );
    expect(event).toEqual([{ sent_by: 'operator:alice', reason: 'proofread twice' }]);

    const nobody = await causeway([
      'send-event',
      'cli.approved',
      'nobody-waits',
      '--payload',
      '{"by":"grace"}',
      '--reason',
      'ahead of the review',
      ...asAlice(),
    ]);
    expect(nobody.code).toBe(0);
    expect(nobody.stdout).toMatch(/no step waits for it yet: kept for later waiters/);
  });

  it('refuses a reason over 1,000 characters (exit 2, BAD_USER_INPUT) and stores nothing', async () => {
    const count = () => query(db(), 'select count(*)::int as n from causeway_events');
    const before = await count();
    const run = await causewayJson([
      'send-event',
      'cli.approved',
      'too-long',
      '--reason',
      'x'.repeat(1_001),
      ...asAlice(),
    ]);
    expect(run.code).toBe(2);
    expect(run.json).toMatchObject({ error: { kind: 'usage', code: 'BAD_USER_INPUT' } });
    expect(await count()).toEqual(before);
  });
});

describe('causeway cancel', () => {
  it('cancels a workflow as the operator with the reason; a repeat changes nothing', async () => {
    const id = await submitted(url(), 'cli-staged', { label: 'cancel-1' });
    await workflowReaches(db(), id, 'waiting');
    const first = await causeway(['cancel', id, '--reason', 'not needed', ...asAlice()]);
    expect(first.code).toBe(0);
    expect(first.stdout.trim()).toBe(`cancel ${id}: cancelled`);
    const edges = await query<{ actor: string; reason: string }>(
      db(),
      `select actor, detail->>'operatorReason' as reason from causeway_transitions
        where workflow_id = $1 and task_id is not null and to_state = 'cancelled'`,
      [id],
    );
    expect(edges.length).toBe(2); // approval (waiting) and finish (pending)
    expect(
      edges.every((edge) => edge.actor === 'operator:alice' && edge.reason === 'not needed'),
    ).toBe(true);

    const repeat = await causewayJson(['cancel', id, '--reason', 'again', ...asAlice()]);
    expect(repeat.code).toBe(0);
    expect(repeat.json).toEqual({
      cancelWorkflow: { workflowId: id, state: 'CANCELLED', changed: false },
    });
  });

  it('refuses (exit 4) to cancel a workflow that already ended otherwise, or a dead task', async () => {
    const id = await submitted(url(), 'doomed', { label: 'cancel-2' });
    await workflowReaches(db(), id, 'dead');
    const workflow = await causeway(['cancel', id, '--reason', 'too late', ...asAlice()]);
    expect(workflow.code).toBe(4);
    expect(workflow.stdout.trim()).toBe(`cancel refused: workflow ${id} already ended dead`);

    const [task] = await storedTasks(db(), id);
    const one = await causewayJson([
      'cancel',
      task?.id as string,
      '--task',
      '--reason',
      'too late',
      ...asAlice(),
    ]);
    expect(one.code).toBe(4);
    expect(one.json).toEqual({
      cancelTask: {
        result: {
          taskId: task?.id,
          state: 'DEAD',
          changed: false,
          reason: 'NON_RETRYABLE_ERROR',
          refusal: 'terminal_state',
          message: expect.any(String),
        },
      },
    });
    const cancels = await query(
      db(),
      "select 1 from causeway_transitions where workflow_id = $1 and reason like 'cancel%'",
      [id],
    );
    expect(cancels).toEqual([]);
  });
});
