/**
 * The attempt ledger read off log rows (R56), for the edges the engine tests do not reach: a
 * cancel asked while leased (the lease is kept until the worker or the sweeper ends it), a step
 * that started children (its attempt ends there, not when the children do), a refused result
 * matched by epoch and holder only, and when readers need to read the refused results at all.
 * No database.
 */
import { mayHaveStaleResults, staleAttemptNotes, taskAttempts } from '@causeway/workflow/internal';
import { describe, expect, it } from 'vitest';
import { transitionRows } from './transition-rows';

const w1 = 'worker:host/1/aa';
const w2 = 'worker:host/2/bb';

describe('taskAttempts', () => {
  it('keeps a cancelled claim running until its holder confirms, and says who ended it', () => {
    const row = transitionRows();
    const rows = [
      row({ to: 'queued', reason: 'submitted' }),
      row({ from: 'queued', to: 'leased', reason: 'lease_acquired', actor: w1, attempt: 1 }),
      row({
        from: 'leased',
        to: 'cancel_requested',
        reason: 'cancel_requested',
        actor: 'operator:alice',
        attempt: 1,
      }),
    ];
    expect(taskAttempts('t1', rows, [])).toMatchObject([
      {
        attempt: 1,
        epoch: 1,
        holder: 'host/1/aa',
        outcome: 'running',
        endedAt: null,
        reason: null,
      },
    ]);
    const confirmed = row({
      from: 'cancel_requested',
      to: 'cancelled',
      reason: 'cancel_confirmed',
      actor: w1,
      attempt: 1,
    });
    expect(taskAttempts('t1', [...rows, confirmed], [])).toMatchObject([
      { outcome: 'settled', reason: 'cancel_confirmed', endedAt: confirmed.at },
    ]);
    const swept = { ...confirmed, reason: 'lease_expired' as const, actor: 'sweeper:host/3/cc' };
    expect(taskAttempts('t1', [...rows, swept], [])).toMatchObject([
      { outcome: 'lease_lost', reason: 'lease_expired' },
    ]);
  });

  it('ends a claim at children_started, and counts epochs over other tasks and workflow rows', () => {
    const row = transitionRows();
    const rows = [
      row({ to: 'queued', reason: 'submitted' }),
      row({ taskId: null, step: null, from: 'queued', to: 'running', reason: 'lease_acquired' }),
      row({
        taskId: 't2',
        from: 'queued',
        to: 'leased',
        reason: 'lease_acquired',
        actor: w2,
        attempt: 1,
      }),
      row({ from: 'queued', to: 'leased', reason: 'lease_acquired', actor: w1, attempt: 1 }),
      row({
        from: 'leased',
        to: 'awaiting_children',
        reason: 'children_started',
        actor: w1,
        attempt: 1,
      }),
      row({
        from: 'awaiting_children',
        to: 'dead',
        reason: 'children_failed',
        actor: 'system',
        attempt: 1,
      }),
      row({ from: 'dead', to: 'queued', reason: 'manual_replay', actor: 'operator:alice' }),
      row({ from: 'queued', to: 'leased', reason: 'lease_acquired', actor: w2, attempt: 1 }),
    ];
    expect(
      taskAttempts('t1', rows, []).map(({ attempt, epoch, holder, outcome, reason }) => [
        attempt,
        epoch,
        holder,
        outcome,
        reason,
      ]),
    ).toEqual([
      [1, 1, 'host/1/aa', 'settled', 'children_started'],
      [1, 2, 'host/2/bb', 'running', null],
    ]);
  });

  it('takes a refused result for the claim of its epoch and holder only', () => {
    const row = transitionRows();
    const rows = [
      row({ from: 'queued', to: 'leased', reason: 'lease_acquired', actor: w1, attempt: 1 }),
      row({
        from: 'leased',
        to: 'queued',
        reason: 'lease_expired',
        actor: 'sweeper:host/2/bb',
        attempt: 1,
      }),
      row({ from: 'queued', to: 'leased', reason: 'lease_acquired', actor: w2, attempt: 2 }),
      row({ from: 'leased', to: 'succeeded', reason: 'completed', actor: w2, attempt: 2 }),
    ];
    const refusedAt = new Date(Date.UTC(2026, 2, 1, 10, 0, 30));
    const stale = [
      { taskId: 't1', epoch: 1, holder: 'host/1/aa', refusedAt },
      // A result fenced on the second claim's epoch by another holder is no result of it.
      { taskId: 't1', epoch: 2, holder: 'host/1/aa', refusedAt },
      { taskId: 't2', epoch: 2, holder: 'host/2/bb', refusedAt },
    ];
    expect(taskAttempts('t1', rows, stale)).toMatchObject([
      { epoch: 1, outcome: 'stale', reason: 'lease_expired', refusedAt },
      { epoch: 2, outcome: 'settled', reason: 'completed', refusedAt: null },
    ]);
    expect(staleAttemptNotes(rows, stale)).toEqual([
      {
        at: refusedAt,
        step: 'publish',
        text: 'attempt 1 by host/1/aa finished after its lease was lost; its result was refused; check the platform for its effect',
      },
    ]);
  });
});

describe('mayHaveStaleResults', () => {
  it('is true only while a claim runs or after the sweeper ended one', () => {
    const row = transitionRows();
    const claimed = [
      row({ to: 'queued', reason: 'submitted' }),
      row({ from: 'queued', to: 'leased', reason: 'lease_acquired', actor: w1, attempt: 1 }),
    ];
    expect(mayHaveStaleResults(claimed.slice(0, 1))).toBe(false);
    expect(mayHaveStaleResults(claimed)).toBe(true);
    const completed = row({
      from: 'leased',
      to: 'succeeded',
      reason: 'completed',
      actor: w1,
      attempt: 1,
    });
    expect(mayHaveStaleResults([...claimed, completed])).toBe(false);
    const swept = {
      ...completed,
      to: 'queued' as const,
      reason: 'lease_expired' as const,
      actor: 'sweeper:x',
    };
    expect(mayHaveStaleResults([...claimed, swept])).toBe(true);
    expect(mayHaveStaleResults([...claimed, swept], 't1')).toBe(true);
    expect(mayHaveStaleResults([...claimed, swept], 't2')).toBe(false);
  });
});
