import { EngineError } from '@causeway/engine';
import { workflow } from '@causeway/workflow';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { expectLogIsSound, tableCounts as logCounts } from './semantics-support';

/**
 * The sender's reason on an event (R38, issue 18's "send the approval event with a reason"):
 * kept on the event row, carried on the `event_received` edge it completes (at its send, or
 * when a later wait takes it) as `detail.operatorReason`, told by explain; a repeat keeps the
 * first send's; a bad reason is refused with `invalid_request` and nothing is written.
 */
const database = useTestDatabase();
const url = () => database().url;

const approvals = workflow({ name: 'reason-approvals', input: z.object({ id: z.string() }) })
  .step('prepare', { queue: 'q-reason', run: (ctx) => ({ id: ctx.input.id }) })
  .event('approval', {
    after: ['prepare'],
    name: 'reason.approved',
    key: (ctx) => ctx.results.prepare.id,
    payload: z.object({ ok: z.boolean() }),
    timeoutMs: 3_600_000,
  })
  .build();
const waits = workflow({ name: 'reason-waits', input: z.object({ id: z.string() }) })
  .event('wait', { name: 'reason.ping', key: (ctx) => ctx.input.id, timeoutMs: 3_600_000 })
  .build();

const engine = () => testEngine(url(), { workflows: [approvals, waits] });

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

async function storedEvent(id: string) {
  const rows = await query<{ sent_by: string; reason: string | null }>(
    url(),
    'select sent_by, reason from causeway_events where id = $1',
    [id],
  );
  return rows[0];
}

async function receivedEdge(workflowId: string) {
  const rows = await query<{ actor: string; detail: Record<string, unknown> | null }>(
    url(),
    `select actor, detail from causeway_transitions
      where workflow_id = $1 and task_id is not null and reason = 'event_received'`,
    [workflowId],
  );
  expect(rows).toHaveLength(1);
  return rows[0];
}

async function tableCounts() {
  const rows = await query<{ events: number; deliveries: number }>(
    url(),
    `select (select count(*)::int from causeway_events) as events,
            (select count(*)::int from causeway_event_deliveries) as deliveries`,
  );
  return { ...(await logCounts(url())), ...(rows[0] as { events: number; deliveries: number }) };
}

describe("an event's reason (R38)", () => {
  it('is stored on the event, carried on the edge it completes and told by explain', async () => {
    const cw = engine();
    const { workflow: run } = await cw.submit('reason-waits', { id: 'sent' });
    // Trimmed, like every operation's reason.
    const by = { operator: 'alice', reason: '  looks good  ' };
    const answer = await cw.sendEvent('reason.ping', 'sent', { any: 1 }, by);
    expect(answer.tasks.map((task) => task.state)).toEqual(['succeeded']);
    expect(await storedEvent(answer.eventId)).toEqual({
      sent_by: 'operator:alice',
      reason: 'looks good',
    });
    expect(await receivedEdge(run.id)).toEqual({
      actor: 'operator:alice',
      detail: { eventId: answer.eventId, operatorReason: 'looks good' },
    });
    const explained = await cw.explain(run.id);
    expect(explained.lines.find((line) => line.includes(' wait: event received'))).toMatch(
      new RegExp(
        `wait: event received by alice: "looks good" \\(event ${answer.eventId}\\), succeeded with its payload$`,
      ),
    );
    const view = await cw.getWorkflow(run.id);
    expect(view?.transitions.find((row) => row.reason === 'event_received')?.detail).toEqual({
      eventId: answer.eventId,
      operatorReason: 'looks good',
    });
    await cw.close();
  });

  it('reaches a wait that starts after the event was kept, and a blank reason is none', async () => {
    const cw = engine();
    const { workflow: run } = await cw.submit('reason-approvals', { id: 'early' });
    // Nobody waits yet (the upstream step has not run): the event is kept with its reason.
    const early = await cw.sendEvent(
      'reason.approved',
      'early',
      { ok: true },
      { operator: 'bo', reason: 'approved ahead of time' },
    );
    expect(early.tasks).toEqual([]);
    const worker = await cw.startWorker({ concurrency: 1 });
    await waitFor(async () => (await cw.getWorkflow(run.id))?.state === 'succeeded');
    await worker.stop();
    expect(await receivedEdge(run.id)).toEqual({
      actor: 'operator:bo',
      detail: { eventId: early.eventId, operatorReason: 'approved ahead of time' },
    });

    const { workflow: blank } = await cw.submit('reason-waits', { id: 'blank' });
    const none = await cw.sendEvent('reason.ping', 'blank', 1, { reason: '   ' });
    expect(await storedEvent(none.eventId)).toEqual({ sent_by: 'client', reason: null });
    expect(await receivedEdge(blank.id)).toEqual({
      actor: 'client',
      detail: { eventId: none.eventId },
    });
    await expectLogIsSound(url());
    await cw.close();
  });

  it("stays the first send's on a repeat with the same idempotency key; nothing is written", async () => {
    const cw = engine();
    await cw.submit('reason-waits', { id: 'repeat' });
    const first = await cw.sendEvent('reason.ping', 'repeat', 1, {
      idempotencyKey: 'reason-k1',
      operator: 'alice',
      reason: 'first words',
    });
    const before = await tableCounts();
    const again = await cw.sendEvent('reason.ping', 'repeat', 1, {
      idempotencyKey: 'reason-k1',
      operator: 'alice',
      reason: 'other words',
    });
    expect(again).toEqual({ ...first, deduplicated: true });
    expect(await tableCounts()).toEqual(before);
    expect((await storedEvent(first.eventId))?.reason).toBe('first words');
    await cw.close();
  });

  it('carries each event of a batch its own reason', async () => {
    const cw = engine();
    const one = await cw.submit('reason-waits', { id: 'batch-1' });
    const two = await cw.submit('reason-waits', { id: 'batch-2' });
    const answers = await cw.sendEvents(
      [
        { name: 'reason.ping', key: 'batch-1', payload: 1, reason: 'for one' },
        { name: 'reason.ping', key: 'batch-2', payload: 2 },
      ],
      { operator: 'carol' },
    );
    expect((await receivedEdge(one.workflow.id))?.detail).toEqual({
      eventId: answers[0]?.eventId,
      operatorReason: 'for one',
    });
    expect((await receivedEdge(two.workflow.id))?.detail).toEqual({
      eventId: answers[1]?.eventId,
    });
    await cw.close();
  });
});

describe('a bad reason: invalid_request, nothing written', () => {
  it('refuses one over 1,000 characters, not text, or text PostgreSQL cannot store', async () => {
    const cw = engine();
    await cw.submit('reason-waits', { id: 'bad' });
    const before = await tableCounts();
    const bad: unknown[] = ['x'.repeat(1_001), 42, null, 'nul \u0000 inside', 'lone \ud800'];
    for (const reason of bad) {
      const refused = await cw
        .sendEvent('reason.ping', 'bad', 1, { operator: 'alice', reason: reason as string })
        .catch((error) => error);
      expect(refused, String(reason).slice(0, 12)).toBeInstanceOf(EngineError);
      expect(refused.code, String(reason).slice(0, 12)).toBe('invalid_request');
    }
    // In a batch, the refusal names the event; the whole batch is refused.
    const batch = await cw
      .sendEvents([
        { name: 'reason.ping', key: 'bad', payload: 1, reason: 'fine' },
        { name: 'reason.ping', key: 'bad', payload: 2, reason: 'y'.repeat(1_001) },
      ])
      .catch((error) => error);
    expect(batch).toMatchObject({ code: 'invalid_request', details: { index: 1 } });
    expect(batch.message).toMatch(/\(event 1\)$/);
    expect(await tableCounts()).toEqual(before);
    // The check is the one every operation's optional reason goes through (a cancel's too).
    const { workflow: other } = await cw.submit('reason-waits', { id: 'bad-cancel' });
    const afterSubmit = await tableCounts();
    const cancel = await cw
      .cancelWorkflow(other.id, { operator: 'alice', reason: 'nul \u0000' })
      .catch((error) => error);
    expect(cancel).toMatchObject({ code: 'invalid_request' });
    expect(await tableCounts()).toEqual(afterSubmit);
    // Exactly 1,000 characters is within the limit.
    await expect(
      cw.sendEvent('reason.ping', 'nobody', 1, { reason: 'z'.repeat(1_000) }),
    ).resolves.toMatchObject({ deduplicated: false });
    expect(await tableCounts()).toEqual({ ...afterSubmit, events: afterSubmit.events + 1 });
    await cw.close();
  });

  it('is refused by the table too, should a writer skip the check', async () => {
    const refused = await query(
      url(),
      `insert into causeway_events (id, name, key, payload, sent_by, reason, received_at)
       values (gen_random_uuid(), 'reason.ping', 'k', '1', 'client', '', now())`,
    ).catch((error) => error);
    expect(refused).toMatchObject({ code: '23514', constraint: 'causeway_events_reason_check' });
  });
});
