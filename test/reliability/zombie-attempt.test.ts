/**
 * R56 with a real zombie: a worker process holds a step, is SIGSTOPped past its lease, the
 * sweeper and another worker take the task and finish it, then the process is continued and
 * its step returns. Its result is refused (R7), nothing the task or the log says changes, and
 * the attempt ledger shows the first attempt `stale` (engine and GraphQL), with `explain`
 * naming it. The zombie process itself keeps running and stops cleanly.
 */
import { describe, expect, it } from 'vitest';
import { aliceToken, data, startApi } from '../api/helpers';
import { causeway } from '../cli/helpers';
import { isMessage, spawnFixture } from '../engine/fixtures/children';
import { attemptsFromLog } from '../helpers/attempt-log';
import { useTestDatabase } from '../helpers/database';
import { query } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { zombieWorkflows } from './fixtures/zombie-workflows';

const database = useTestDatabase();
/** Short leases, so the stopped process loses its lease quickly. */
const leaseMs = 800;

async function storedState(url: string, workflowId: string) {
  return {
    tasks: await query(url, 'select * from causeway_tasks where workflow_id = $1', [workflowId]),
    workflow: await query(url, 'select * from causeway_workflows where id = $1', [workflowId]),
    log: await query(url, 'select * from causeway_transitions where workflow_id = $1', [
      workflowId,
    ]),
  };
}

describe('a worker process SIGSTOPped past its lease, then SIGCONT (R56)', () => {
  it('has its late result refused and recorded as a stale attempt; nothing else changes', async () => {
    const url = database().url;
    const api = await startApi(url, {
      engine: {
        workflows: zombieWorkflows({ reached: async () => undefined }),
        leaseMs,
        sweepIntervalMs: 100,
        pollIntervalMs: 100,
      },
    });
    const { engine } = api;
    const zombie = spawnFixture(
      '../../reliability/fixtures/zombie-worker.ts',
      { CAUSEWAY_CHILD_DATABASE_URL: url, CAUSEWAY_CHILD_LEASE_MS: String(leaseMs) },
      'zombie-worker',
    );
    const { holder: zombieHolder } = await zombie.ready(60_000);
    const { workflow } = await engine.submit('zombie-post', { label: 'zombie' });
    const reached = await zombie.waitForMessage(
      isMessage('reached', (message) => message.workflowId === workflow.id),
      { description: 'the step reached in the zombie' },
    );
    expect(reached.attempt).toBe(1);

    zombie.process.kill('SIGSTOP');
    let before: Awaited<ReturnType<typeof storedState>>;
    try {
      // This engine's sweeper takes the task once the lease ran out; its worker finishes it.
      await engine.startWorker({ concurrency: 1 });
      await waitFor(
        async () => {
          const [task] = await query<{ state: string }>(
            url,
            'select state from causeway_tasks where id = $1',
            [reached.taskId],
          );
          return task?.state === 'succeeded';
        },
        { timeoutMs: 15_000, description: 'the task finished by the live worker' },
      );
      before = await storedState(url, workflow.id);
      // Waits in the IPC pipe: the step returns as soon as the process runs again.
      zombie.process.send({ type: 'finish' });
    } finally {
      zombie.process.kill('SIGCONT');
    }

    const [stale] = await waitFor(
      async () => {
        const rows = await query<{ lease_epoch: string; holder: string; refused_at: Date }>(
          url,
          'select lease_epoch, holder, refused_at from causeway_stale_results where task_id = $1',
          [reached.taskId],
        );
        return rows.length > 0 ? rows : undefined;
      },
      { timeoutMs: 15_000, description: "the zombie's result refused" },
    );
    expect(stale).toEqual({ lease_epoch: '1', holder: zombieHolder, refused_at: expect.any(Date) });
    expect(await storedState(url, workflow.id)).toEqual(before);

    const attempts = (await engine.getWorkflow(workflow.id))?.tasks[0]?.attempts;
    expect(attempts).toEqual(await attemptsFromLog(url, reached.taskId));
    expect(
      attempts?.map(({ epoch, holder, outcome, reason }) => [epoch, holder, outcome, reason]),
    ).toEqual([
      [1, zombieHolder, 'stale', 'lease_expired'],
      [2, engine.holder, 'settled', 'completed'],
    ]);
    const sentence = `attempt 1 by ${zombieHolder} finished after its lease was lost; its result was refused; check the platform for its effect`;
    expect((await engine.explain(workflow.id)).text).toContain(sentence);

    const answer = await data<{
      workflow: {
        explanation: string;
        tasks: {
          attempts: {
            attempt: number;
            holder: string;
            outcome: string;
            refusedAt: string | null;
          }[];
        }[];
      };
    }>(
      api.url,
      `query($id: ID!) { workflow(id: $id) { explanation
        tasks { attempts { attempt holder outcome refusedAt } } } }`,
      { variables: { id: workflow.id }, token: aliceToken },
    );
    expect(answer.workflow.explanation).toContain(sentence);
    expect(answer.workflow.tasks[0]?.attempts).toEqual([
      {
        attempt: 1,
        holder: zombieHolder,
        outcome: 'STALE',
        refusedAt: stale?.refused_at.toISOString(),
      },
      { attempt: 2, holder: engine.holder, outcome: 'SETTLED', refusedAt: null },
    ]);

    // The CLI's status lists it under the steps.
    const status = await causeway(['status', workflow.id, '--url', api.url]);
    expect(status.code).toBe(0);
    const lines = status.stdout.split('\n');
    const attemptRows = lines
      .slice(lines.indexOf('attempts:') + 2)
      .filter((line) => line.trim() !== '')
      .map((line) => line.split(/ {2,}/));
    expect(attemptRows.map((row) => [row[0], row[1], row[3], row[7]])).toEqual([
      ['post', '1', zombieHolder, 'lease_expired'],
      ['post', '2', engine.holder, 'completed'],
    ]);
    expect(attemptRows[0]?.[6]).toMatch(/^stale: result refused \S+Z \(.+\)$/);
    expect(attemptRows[1]?.[6]).toBe('settled');

    // The dashboard's workflow page shows it in the task's attempts.
    const page = await fetch(`${new URL(api.url).origin}/workflows/${workflow.id}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<tr class="attempt-stale">');
    expect(html).toContain('its result came after its lease was lost and was refused');

    // The zombie did not crash over it, and stops cleanly.
    expect(zombie.process.exitCode).toBeNull();
    expect(await zombie.stop()).toEqual({ code: 0, signal: null });
  }, 60_000);
});
