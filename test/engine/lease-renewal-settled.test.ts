/**
 * A renewal (R9) that finds no lease to renew for an attempt whose result was written meanwhile
 * leaves that attempt alone: the lease was not lost, the attempt ended. A worker with a short
 * lease (renewals every 100 ms) drains many quick steps, so renewals keep meeting results that
 * committed before their snapshot; not one line may say a lease was lost, and no step runs
 * twice. A running step whose lease did move on is still aborted. Real PostgreSQL, real workers.
 */
import { defineWorkflow, step } from '@causeway/workflow';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { expectLogIsSound } from './semantics-support';

const database = useTestDatabase();
const url = () => database().url;
const count = 3_000;

const quick = defineWorkflow({
  name: 'renewal-quick',
  input: z.object({ i: z.number() }),
  steps: { only: step({ queue: 'q-renewal-quick', run: () => null }) },
});

/** Why the held step's signal was aborted, once it was. */
let heldAbort: unknown = null;
const held = defineWorkflow({
  name: 'renewal-held',
  input: z.object({}),
  steps: {
    only: step({
      queue: 'q-renewal-held',
      reentrant: true,
      run: (ctx) =>
        new Promise<null>((resolve) => {
          ctx.signal.addEventListener('abort', () => {
            heldAbort = ctx.signal.reason;
            resolve(null);
          });
        }),
    }),
  },
});

/** An engine with a 300 ms lease (renewals every 100 ms), and the warnings it logs. */
function engineLoggingWarnings() {
  const lines: { level: number; msg?: string }[] = [];
  const stream = {
    write(chunk: string) {
      for (const line of chunk.split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line));
    },
  };
  const cw = testEngine(url(), {
    workflows: [quick, held],
    leaseMs: 300,
    logger: pino({ level: 'warn' }, stream),
  });
  return { cw, lines };
}

describe('a renewal beside results being written (R9)', () => {
  it('says no lease was lost when the attempts ended', async () => {
    const { cw, lines } = engineLoggingWarnings();
    await cw.migrate();
    await cw.submitMany(
      Array.from({ length: count }, (_, i) => ({ name: 'renewal-quick', input: { i } })),
    );
    const worker = await cw.startWorker({ queues: ['q-renewal-quick'], concurrency: 10 });
    await waitFor(
      async () => {
        const [row] = await query<{ done: string }>(
          url(),
          "select count(*) as done from causeway_workflows where state = 'succeeded'",
        );
        return Number(row?.done) === count ? true : undefined;
      },
      { timeoutMs: 60_000, description: `${count} workflows to succeed` },
    );
    await worker.stop();
    expect(lines.filter((line) => /lease lost|cancel requested/.test(line.msg ?? ''))).toEqual([]);
    const [attempts] = await query<{ repeated: string }>(
      url(),
      'select count(*) as repeated from causeway_tasks where attempt > 1',
    );
    expect(Number(attempts?.repeated)).toBe(0);
    await expectLogIsSound(url());
  });

  it('still aborts a running step whose lease another holder took', async () => {
    const { cw, lines } = engineLoggingWarnings();
    await cw.migrate();
    const { workflow } = await cw.submit('renewal-held', {});
    const worker = await cw.startWorker({ queues: ['q-renewal-held'], concurrency: 1 });
    await waitFor(() => (worker.running.size > 0 ? true : undefined));
    // As a sweep and another claim would leave it: the lease's epoch moved on.
    await query(
      url(),
      'update causeway_tasks set lease_epoch = lease_epoch + 1 where workflow_id = $1',
      [workflow.id],
    );
    await waitFor(() => (heldAbort === null ? undefined : true));
    await worker.stop();
    expect(heldAbort).toMatchObject({ reason: 'lease_lost' });
    expect(lines.map((line) => line.msg)).toContain('lease lost: aborting the step');
  });
});
