import { explain } from '@causeway/workflow';
import { describe, expect, it } from 'vitest';
import { transitionRows } from './transition-rows';

const row = transitionRows();

describe('explain', () => {
  it('tells the R27 story: queued, leased, timed out, retry at, cancelled before start by alice', () => {
    const rows = [
      row({ step: null, taskId: null, to: 'queued', reason: 'submitted' }),
      row({ step: 'render', taskId: 't0', to: 'queued', reason: 'submitted' }),
      row({
        step: 'render',
        taskId: 't0',
        from: 'queued',
        to: 'leased',
        reason: 'lease_acquired',
        actor: 'worker:w0',
        attempt: 1,
      }),
      row({
        step: 'render',
        taskId: 't0',
        from: 'leased',
        to: 'succeeded',
        reason: 'completed',
        actor: 'worker:w0',
        attempt: 1,
      }),
      row({ to: 'queued', reason: 'upstream_succeeded', from: 'pending', actor: 'system' }),
      row({
        from: 'queued',
        to: 'leased',
        reason: 'lease_acquired',
        actor: 'worker:w1',
        attempt: 1,
      }),
      row({
        from: 'leased',
        to: 'queued',
        reason: 'retry_scheduled',
        actor: 'worker:w1',
        attempt: 1,
        errorCategory: 'timeout',
        errorSummary: 'platform did not answer in 30 s',
        detail: { runAt: '2026-03-01T10:00:07.000Z' },
      }),
      row({
        from: 'queued',
        to: 'cancelled',
        reason: 'cancelled_before_start',
        actor: 'operator:alice',
        attempt: 1,
      }),
      row({
        step: null,
        taskId: null,
        from: 'running',
        to: 'cancelled',
        reason: 'cancelled_before_start',
      }),
    ];
    const explanation = explain(rows);
    expect(explanation.lines).toEqual([
      '10:00:01 workflow: accepted (queued)',
      '10:00:02 render: accepted and queued',
      '10:00:03 render: leased by w0 (attempt 1)',
      '10:00:04 render: succeeded',
      '10:00:05 publish: upstream steps succeeded, queued',
      '10:00:06 publish: leased by w1 (attempt 1)',
      '10:00:07 publish: failed (timeout: platform did not answer in 30 s), retry at 10:00:07',
      '10:00:08 publish: cancelled before start by alice',
      '10:00:09 workflow: running → cancelled (cancelled before start)',
    ]);
    expect(explanation.summary).toBe('publish cancelled, render succeeded');
    expect(explanation.workflowState).toBe('cancelled');
    expect(explanation.text.split('\n').at(-1)).toBe(
      'workflow cancelled: publish cancelled, render succeeded',
    );
  });

  it('says when a cancel came too late and when an effect is uncertain', () => {
    const lines = explain([
      row({
        from: 'cancel_requested',
        to: 'succeeded',
        reason: 'cancel_after_submit',
        actor: 'worker:w1',
        attempt: 1,
      }),
      row({
        from: 'leased',
        to: 'dead',
        reason: 'lease_expired_effect_uncertain',
        actor: 'sweeper:s1',
        errorCategory: 'unknown',
        attempt: 1,
      }),
      row({
        from: 'dead',
        to: 'queued',
        reason: 'manual_replay',
        actor: 'operator:bob',
        detail: { operatorReason: 'checked the platform' },
      }),
    ]).lines;
    expect(lines[0]).toContain('cancel came too late, the effect was already submitted: succeeded');
    expect(lines[1]).toContain('effect uncertain, dead (needs a human)');
    expect(lines[2]).toContain('replayed by bob: "checked the platform"');
  });

  it('orders by database time whatever the input order', () => {
    const early = row({
      to: 'queued',
      reason: 'submitted',
      at: new Date(Date.UTC(2026, 0, 1, 0, 0, 1)),
    });
    const late = row({
      from: 'queued',
      to: 'leased',
      reason: 'lease_acquired',
      actor: 'worker:w',
      attempt: 1,
      at: new Date(Date.UTC(2026, 0, 1, 0, 0, 2)),
    });
    expect(explain([late, early]).lines[0]).toContain('accepted and queued');
    expect(explain([late, early]).summary).toBe('publish leased');
  });
});
