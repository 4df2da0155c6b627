/**
 * `causeway replay`, `requeue-dead`, `schedules`, `pause-schedule`, `resume-schedule` and
 * `trigger-schedule` as child processes against a server in another process: the edges and
 * schedule history they leave, their `--json` shapes and exit codes.
 */
import { describe, expect, it } from 'vitest';
import { query } from '../helpers/engine';
import { causeway, causewayJson, storedTasks, submitted, useCli, workflowReaches } from './helpers';

const { url, db, asAlice } = useCli();

const taskResult = (taskId: string | undefined, state: string, reason: string) => ({
  taskId,
  state,
  changed: true,
  reason,
  refusal: null,
  message: null,
});

async function deadTask(label: string): Promise<{ workflowId: string; taskId: string }> {
  const workflowId = await submitted(url(), 'doomed', { label });
  await workflowReaches(db(), workflowId, 'dead');
  const [task] = await storedTasks(db(), workflowId);
  return { workflowId, taskId: task?.id as string };
}

describe('causeway replay', () => {
  it('puts a dead task back in the queue as the operator, with the reason', async () => {
    const { workflowId, taskId } = await deadTask('replay-1');
    const { code, json } = await causewayJson([
      'replay',
      taskId,
      '--reason',
      'card fixed',
      ...asAlice(),
    ]);
    expect(code).toBe(0);
    expect(json).toEqual({ replayTask: { result: taskResult(taskId, 'QUEUED', 'MANUAL_REPLAY') } });
    const edges = await query<{ actor: string; reason: string }>(
      db(),
      `select actor, detail->>'operatorReason' as reason from causeway_transitions
        where task_id = $1 and reason = 'manual_replay'`,
      [taskId],
    );
    expect(edges).toEqual([{ actor: 'operator:alice', reason: 'card fixed' }]);
    await workflowReaches(db(), workflowId, 'dead'); // it fails again, as doomed does
  });

  it('refuses (exit 4, CONFLICT) to replay a task that is not dead, and writes nothing', async () => {
    const workflowId = await submitted(url(), 'cli-staged', { label: 'replay-2' });
    await workflowReaches(db(), workflowId, 'waiting');
    const prepare = (await storedTasks(db(), workflowId)).find((task) => task.step === 'prepare');
    const before = await query(db(), 'select id from causeway_transitions where workflow_id = $1', [
      workflowId,
    ]);
    const human = await causeway([
      'replay',
      prepare?.id as string,
      '--reason',
      'why not',
      ...asAlice(),
    ]);
    expect(human.code).toBe(4);
    expect(human.stderr).toMatch(
      /^causeway: only a dead task can be replayed; this one is succeeded\n$/,
    );
    const { code, json } = await causewayJson([
      'replay',
      prepare?.id as string,
      '--reason',
      'why not',
      ...asAlice(),
    ]);
    expect(code).toBe(4);
    expect(json).toEqual({
      error: { kind: 'refused', code: 'CONFLICT', exitCode: 4, message: expect.any(String) },
    });
    const after = await query(db(), 'select id from causeway_transitions where workflow_id = $1', [
      workflowId,
    ]);
    expect(after).toEqual(before);
  });
});

describe('causeway requeue-dead', () => {
  it('requeues the dead tasks whose dead edge has the reason code within the window', async () => {
    const [from] = await query<{ now: string }>(db(), "select to_json(now()) #>> '{}' as now");
    const first = await deadTask('requeue-1');
    const second = await deadTask('requeue-2');
    const { code, json } = await causewayJson([
      'requeue-dead',
      '--reason-code',
      'non_retryable_error',
      '--from',
      from?.now ?? 'missing',
      '--reason',
      'after the fix',
      ...asAlice(),
    ]);
    expect(code).toBe(0);
    const results = (json as { requeueDead: { results: { taskId: string }[] } }).requeueDead
      .results;
    expect([...results].sort((a, b) => a.taskId.localeCompare(b.taskId))).toEqual(
      [first.taskId, second.taskId]
        .sort()
        .map((taskId) => taskResult(taskId, 'QUEUED', 'BULK_REQUEUE')),
    );
    const edges = await query<{ task_id: string; actor: string }>(
      db(),
      "select task_id::text, actor from causeway_transitions where reason = 'bulk_requeue' and task_id is not null order by task_id",
    );
    expect(edges).toEqual(
      [first.taskId, second.taskId].sort().map((id) => ({ task_id: id, actor: 'operator:alice' })),
    );

    const none = await causeway([
      'requeue-dead',
      '--reason-code',
      'attempts_exhausted',
      '--from',
      '2000-01-01T00:00:00Z',
      '--reason',
      'nothing to do',
      ...asAlice(),
    ]);
    expect(none.code).toBe(0);
    expect(none.stdout).toBe('requeued nothing: no dead task matches\n');
  });
});

describe('causeway schedules and the schedule operations', () => {
  it('lists, pauses, resumes and triggers a schedule, each kept in its history', async () => {
    const listed = await causewayJson(['schedules', '--url', url()]);
    expect(listed.code).toBe(0);
    const yearly = {
      name: 'cli-yearly',
      workflow: 'cli-staged',
      cron: '0 0 1 1 *',
      timezone: 'UTC',
      catchUp: 'LATEST',
      paused: null,
      nextTickAt: expect.any(String),
      lastTickAt: null,
      lastWorkflow: null,
    };
    expect(listed.json).toEqual({ schedules: [yearly] });
    expect(
      new Date(
        (listed.json as { schedules: { nextTickAt: string }[] }).schedules[0]?.nextTickAt as string,
      ).getUTCMonth(),
    ).toBe(0);

    const paused = await causewayJson([
      'pause-schedule',
      'cli-yearly',
      '--reason',
      'quiet week',
      ...asAlice(),
    ]);
    expect(paused.code).toBe(0);
    expect(paused.json).toEqual({
      pauseSchedule: {
        changed: true,
        schedule: {
          ...yearly,
          paused: { at: expect.any(String), by: 'alice', reason: 'quiet week' },
        },
      },
    });
    const table = await causeway(['schedules', '--url', url()]);
    expect(table.stdout).toMatch(/^NAME +WORKFLOW +CRON +TIME ZONE +NEXT TICK +LAST RUN +PAUSED$/m);
    expect(table.stdout).toMatch(
      /^cli-yearly +cli-staged +0 0 1 1 \* +UTC +- +- +by alice: quiet week$/m,
    );
    const again = await causeway([
      'pause-schedule',
      'cli-yearly',
      '--reason',
      'still quiet',
      ...asAlice(),
    ]);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe('cli-yearly was already paused; nothing changed\n');

    const triggered = await causewayJson([
      'trigger-schedule',
      'cli-yearly',
      '--reason',
      'one now',
      ...asAlice(),
    ]);
    expect(triggered.code).toBe(0);
    const workflow = (triggered.json as { triggerSchedule: { workflow: { id: string } } })
      .triggerSchedule.workflow;
    expect(triggered.json).toEqual({
      triggerSchedule: {
        schedule: { name: 'cli-yearly' },
        workflow: { id: workflow.id, name: 'cli-staged', state: expect.any(String) },
      },
    });
    const [input] = await query<{ input: unknown }>(
      db(),
      'select input from causeway_workflows where id = $1',
      [workflow.id],
    );
    expect(input?.input).toEqual({ label: 'from-schedule' });

    const resumed = await causeway([
      'resume-schedule',
      'cli-yearly',
      '--reason',
      'back',
      ...asAlice(),
    ]);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toMatch(
      /^cli-yearly resumed; next tick \d{4}-01-01T00:00:00Z \(in \S+\)\n$/,
    );

    const history = await query<{ kind: string; operator: string; reason: string }>(
      db(),
      `select kind, operator, reason from causeway_schedule_events order by id`,
    );
    expect(history).toEqual([
      { kind: 'paused', operator: 'alice', reason: 'quiet week' },
      { kind: 'triggered', operator: 'alice', reason: 'one now' },
      { kind: 'resumed', operator: 'alice', reason: 'back' },
    ]);
  });
});
