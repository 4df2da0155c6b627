/**
 * R60 for events: when the one-statement send fails (its self-check, or a serialization
 * failure), the same events go through the full decision; the send neither fails nor loses the
 * completion (`sendInOneStatement` answers null on a retryable error, and `sendEvents` then
 * takes the transaction path). Provoked for real in this file's own database by a trigger that
 * acts only inside the send's statement or session function (it recognises the text the
 * client sent).
 */
import { workflow } from '@causeway/workflow';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { type Sabotage, sabotageStatement } from './fixtures/statement-sabotage';
import { expectLogIsSound } from './semantics-support';

const database = useTestDatabase();
const url = () => database().url;

const approval = workflow({ name: 'send-fallback', input: z.object({ id: z.string() }) })
  .event('wait', {
    name: 'fallback.approved',
    key: (ctx) => ctx.input.id,
    payload: z.object({ by: z.string() }),
    timeoutMs: 60_000,
  })
  .build();

const engine = () => testEngine(url(), { workflows: [approval] });

/** Installs the trigger; it acts only in the send's statement or its session function. */
const sabotageSend = (how: Sabotage) =>
  sabotageStatement(
    url(),
    'test_sabotage_send',
    {
      queryParts: ['event_insert as (', 'causeway_event_send_'],
      fromState: 'waiting',
      toState: 'succeeded',
    },
    how,
  );

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

afterEach(async () => {
  await query(url(), 'drop trigger if exists test_sabotage_send on causeway_tasks');
});

describe.each<Sabotage>(['skip_update', 'serialization_failure'])(
  'the one-statement send fails (%s): the full decision sends the events (R60)',
  (how) => {
    it('the waiting step succeeds once with the payload, and the log agrees with the rows', async () => {
      const cw = engine();
      const id = `a-${how}`;
      const { workflow: run } = await cw.submit('send-fallback', { id });
      await sabotageSend(how);
      const answer = await cw.sendEvent('fallback.approved', id, { by: 'ada' });
      expect(answer.tasks.map((task) => [task.workflowId, task.step, task.state])).toEqual([
        [run.id, 'wait', 'succeeded'],
      ]);
      const rows = await query<{ state: string; output: unknown }>(
        url(),
        'select state, output from causeway_tasks where workflow_id = $1',
        [run.id],
      );
      expect(rows).toEqual([{ state: 'succeeded', output: { by: 'ada' } }]);
      const received = await query<{ n: number }>(
        url(),
        `select count(*)::int as n from causeway_transitions
        where workflow_id = $1 and reason = 'event_received' and task_id is not null`,
        [run.id],
      );
      expect(received).toEqual([{ n: 1 }]);
      const events = await query<{ n: number }>(
        url(),
        "select count(*)::int as n from causeway_events where name = 'fallback.approved' and key = $1",
        [id],
      );
      expect(events).toEqual([{ n: 1 }]);
      await expectLogIsSound(url());
    });
  },
);
