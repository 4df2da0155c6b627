import {
  type Actor,
  decideTaskEdge,
  defaultRetryPolicy,
  type RetryPolicy,
  type TaskEvent,
  type TaskSnapshot,
} from '@causeway/workflow/internal';
import { describe, expect, it } from 'vitest';
import { taskSnapshot } from './task-snapshots';

const now = new Date('2026-03-01T10:00:00.000Z');
const worker: Actor = { kind: 'worker', name: 'host/41/boot1' };
const sweeper: Actor = { kind: 'sweeper', name: 'host/42/boot2' };
const alice: Actor = { kind: 'operator', name: 'alice' };
const policy: RetryPolicy = {
  ...defaultRetryPolicy,
  maxAttempts: 3,
  backoff: { initialIntervalMs: 1_000, backoffCoefficient: 2, maximumIntervalMs: 10_000 },
};

function task(overrides: Partial<TaskSnapshot> = {}): TaskSnapshot {
  return taskSnapshot(now, overrides);
}

function decide(snapshot: TaskSnapshot, event: TaskEvent, options: Partial<RetryPolicy> = {}) {
  return decideTaskEdge({
    task: snapshot,
    policy: { ...policy, ...options },
    event,
    now,
    random: () => 0.5,
  });
}

function edgeOf(snapshot: TaskSnapshot, event: TaskEvent, options: Partial<RetryPolicy> = {}) {
  const decision = decide(snapshot, event, options);
  if (!decision.ok)
    throw new Error(`refused: ${decision.refusal.code} ${decision.refusal.message}`);
  return decision;
}

describe('decideTaskEdge', () => {
  it('claims a queued task: new attempt, effect marker reset, worker actor', () => {
    const { edge, next } = edgeOf(task({ attempt: 1, effectStarted: true }), {
      type: 'claim',
      actor: worker,
    });
    expect(edge).toMatchObject({
      from: 'queued',
      to: 'leased',
      reason: 'lease_acquired',
      actor: 'worker:host/41/boot1',
      attempt: 2,
    });
    expect(next).toMatchObject({ state: 'leased', attempt: 2, effectStarted: false });
  });

  it('finalizes a claim past the deadline as dead before start, by the system', () => {
    const { edge } = edgeOf(task({ deadlineAt: new Date(now.getTime() - 1) }), {
      type: 'claim',
      actor: worker,
    });
    expect(edge).toMatchObject({
      to: 'dead',
      reason: 'deadline_exceeded_before_start',
      actor: 'system',
      errorCategory: 'timeout',
    });
  });

  it('schedules a retry with jittered backoff for a transient error', () => {
    const { edge, next } = edgeOf(task({ state: 'leased', attempt: 2 }), {
      type: 'fail',
      actor: worker,
      category: 'throttled',
      summary: '429',
    });
    // attempt 2: ceiling 2,000 ms, random 0.5 → 1,000 ms
    expect(edge).toMatchObject({
      to: 'queued',
      reason: 'retry_scheduled',
      errorCategory: 'throttled',
      attempt: 2,
    });
    expect(next.runAt?.toISOString()).toBe('2026-03-01T10:00:01.000Z');
  });

  it('retries a throttled step exactly at Retry-After, instead of the backoff (R51)', () => {
    const { edge, next } = edgeOf(task({ state: 'leased', attempt: 1 }), {
      type: 'fail',
      actor: worker,
      category: 'throttled',
      summary: '429',
      retryAfterMs: 30_000,
    });
    expect(next.runAt?.toISOString()).toBe('2026-03-01T10:00:30.000Z');
    expect(edge.detail).toEqual({ runAt: '2026-03-01T10:00:30.000Z', retryAfterMs: 30_000 });
  });

  it('waits at least Retry-After for any other category, with the jitter on top of it', () => {
    const { edge, next } = edgeOf(task({ state: 'leased', attempt: 1 }), {
      type: 'fail',
      actor: worker,
      category: 'unavailable',
      summary: '503',
      retryAfterMs: 30_000,
    });
    // Retry-After (30 s) plus the jitter (0.5 × 1 s ceiling) on top.
    expect(next.runAt?.toISOString()).toBe('2026-03-01T10:00:30.500Z');
    expect(edge.detail).toEqual({ runAt: '2026-03-01T10:00:30.500Z', retryAfterMs: 30_000 });
  });

  it('never retries unauthorized', () => {
    const { edge, next } = edgeOf(task({ state: 'leased', attempt: 1 }), {
      type: 'fail',
      actor: worker,
      category: 'unauthorized',
      summary: '401',
    });
    expect(edge).toMatchObject({
      to: 'dead',
      reason: 'non_retryable_error',
      errorCategory: 'unauthorized',
    });
    expect(next.lastErrorCategory).toBe('unauthorized');
  });

  it('ends in attempts_exhausted with the last category on the last attempt', () => {
    const { edge } = edgeOf(task({ state: 'leased', attempt: 3 }), {
      type: 'fail',
      actor: worker,
      category: 'unknown',
      summary: 'boom',
    });
    expect(edge).toMatchObject({
      to: 'dead',
      reason: 'attempts_exhausted',
      errorCategory: 'unknown',
      attempt: 3,
    });
  });

  it('gives up with deadline_exceeded when the next attempt would start after the deadline', () => {
    const { edge } = edgeOf(
      task({ state: 'leased', attempt: 1, deadlineAt: new Date(now.getTime() + 100) }),
      {
        type: 'fail',
        actor: worker,
        category: 'network',
        summary: 'reset',
      },
    );
    expect(edge).toMatchObject({
      to: 'dead',
      reason: 'deadline_exceeded',
      errorCategory: 'network',
    });
  });

  it('re-queues an expired reentrant lease, even after its effect started', () => {
    const { edge } = edgeOf(
      task({ state: 'leased', attempt: 1, effectStarted: true }),
      { type: 'lease_expired', actor: sweeper },
      { reentrant: true },
    );
    expect(edge).toMatchObject({
      to: 'queued',
      reason: 'lease_expired',
      actor: 'sweeper:host/42/boot2',
    });
  });

  it('makes an expired non-reentrant lease dead once its effect started, and re-queues it before', () => {
    expect(
      edgeOf(task({ state: 'leased', attempt: 1, effectStarted: true }), {
        type: 'lease_expired',
        actor: sweeper,
      }).edge,
    ).toMatchObject({
      to: 'dead',
      reason: 'lease_expired_effect_uncertain',
      errorCategory: 'unknown',
    });
    expect(
      edgeOf(task({ state: 'leased', attempt: 1 }), { type: 'lease_expired', actor: sweeper }).edge,
    ).toMatchObject({
      to: 'queued',
      reason: 'lease_expired',
    });
  });

  it('re-queues an expired non-reentrant lease whose effect has evidence: the re-run asks, never resubmits', () => {
    const { edge } = edgeOf(
      task({ state: 'leased', attempt: 1, effectStarted: true, evidence: 'acc-7' }),
      { type: 'lease_expired', actor: sweeper },
    );
    expect(edge).toMatchObject({ to: 'queued', reason: 'lease_expired' });
  });

  it("keeps the requester's reason on cancel edges", () => {
    expect(
      edgeOf(task({ state: 'queued' }), { type: 'cancel', actor: alice, reason: ' wrong note ' })
        .edge.detail,
    ).toEqual({ operatorReason: 'wrong note' });
    expect(
      edgeOf(task({ state: 'leased', attempt: 1 }), {
        type: 'cancel',
        actor: alice,
        reason: 'stop',
      }).edge.detail,
    ).toEqual({ operatorReason: 'stop' });
  });

  it('cancels before start, requests cancel while leased, and is idempotent', () => {
    expect(edgeOf(task({ state: 'pending' }), { type: 'cancel', actor: alice }).edge.reason).toBe(
      'cancelled_before_start',
    );
    const requested = edgeOf(task({ state: 'leased', attempt: 1 }), {
      type: 'cancel',
      actor: { kind: 'client' },
    });
    expect(requested.edge).toMatchObject({
      to: 'cancel_requested',
      reason: 'cancel_requested',
      actor: 'client',
    });
    const again = decide(requested.next, { type: 'cancel', actor: alice });
    expect(again).toMatchObject({ ok: false, refusal: { code: 'cancel_already_requested' } });
  });

  it('answers a cancel of a submitted effect clearly and a cancel of a terminal task with its state', () => {
    expect(
      decide(task({ state: 'awaiting_receipt', attempt: 1 }), { type: 'cancel', actor: alice }),
    ).toMatchObject({
      ok: false,
      refusal: { code: 'effect_already_submitted', state: 'awaiting_receipt' },
    });
    expect(
      decide(task({ state: 'succeeded', attempt: 1 }), { type: 'cancel', actor: alice }),
    ).toMatchObject({
      ok: false,
      refusal: { code: 'terminal_state', state: 'succeeded' },
    });
  });

  it('confirms a cancel at the boundary, or records that it came after the submit', () => {
    const requested = task({ state: 'cancel_requested', attempt: 1 });
    expect(edgeOf(requested, { type: 'boundary', actor: worker }).edge).toMatchObject({
      to: 'cancelled',
      reason: 'cancel_confirmed',
    });
    expect(edgeOf(requested, { type: 'complete', actor: worker }).edge).toMatchObject({
      to: 'succeeded',
      reason: 'cancel_after_submit',
    });
    expect(edgeOf(requested, { type: 'await_receipt', actor: worker }).edge).toMatchObject({
      to: 'awaiting_receipt',
      reason: 'cancel_after_submit',
    });
  });

  it('hands a task back at shutdown only if its effect has not started, without spending the attempt', () => {
    const { edge, next } = edgeOf(task({ state: 'leased', attempt: 2 }), {
      type: 'release',
      actor: worker,
    });
    expect(edge).toMatchObject({ to: 'queued', reason: 'worker_shutdown' });
    expect(next.attempt).toBe(1);
    expect(
      decide(task({ state: 'leased', attempt: 2, effectStarted: true }), {
        type: 'release',
        actor: worker,
      }),
    ).toMatchObject({
      ok: false,
      refusal: { code: 'effect_started' },
    });
  });

  it('moves receipts on: confirmed, rejected with retry, timeout of a non-reentrant step', () => {
    const waiting = task({ state: 'awaiting_receipt', attempt: 1 });
    const receipt: Actor = { kind: 'receipt' };
    expect(edgeOf(waiting, { type: 'receipt_confirmed', actor: receipt }).edge.reason).toBe(
      'receipt_confirmed',
    );
    expect(
      edgeOf(waiting, {
        type: 'receipt_rejected',
        actor: receipt,
        category: 'unavailable',
        summary: '503',
      }).edge,
    ).toMatchObject({
      to: 'queued',
      reason: 'receipt_rejected',
    });
    expect(
      edgeOf(waiting, {
        type: 'receipt_rejected',
        actor: receipt,
        category: 'conflict',
        summary: 'dup',
      }).edge,
    ).toMatchObject({
      to: 'dead',
      reason: 'receipt_rejected',
    });
    expect(edgeOf(waiting, { type: 'receipt_timeout', actor: sweeper }).edge).toMatchObject({
      to: 'dead',
      reason: 'receipt_timeout',
    });
  });

  it('replays a dead task with operator name and reason, a fresh attempt budget and replay count + 1', () => {
    const deadTask = task({
      state: 'dead',
      attempt: 3,
      replayCount: 1,
      lastErrorCategory: 'unknown',
    });
    const { edge, next } = edgeOf(deadTask, {
      type: 'replay',
      actor: alice,
      reason: 'platform fixed',
      bulk: false,
    });
    expect(edge).toMatchObject({
      from: 'dead',
      to: 'queued',
      reason: 'manual_replay',
      actor: 'operator:alice',
    });
    expect(edge.detail).toEqual({ operatorReason: 'platform fixed', replayCount: 2 });
    expect(next).toMatchObject({ attempt: 0, replayCount: 2 });
    expect(
      decide(deadTask, { type: 'replay', actor: alice, reason: '  ', bulk: false }),
    ).toMatchObject({
      ok: false,
      refusal: { code: 'invalid_operator_request' },
    });
    expect(
      decide(task({ state: 'queued' }), { type: 'replay', actor: alice, reason: 'x', bulk: true }),
    ).toMatchObject({
      ok: false,
      refusal: { code: 'not_applicable' },
    });
  });

  it('refuses an edge the table does not allow for the actor', () => {
    // A client may not replay: dead → queued belongs to operators.
    const decision = decide(task({ state: 'dead' }), {
      type: 'replay',
      actor: { kind: 'client', name: 'x' },
      reason: 'r',
      bulk: false,
    });
    expect(decision).toMatchObject({ ok: false, refusal: { code: 'actor_not_allowed' } });
  });

  it('finalizes a queued task whose deadline passed, and refuses before it passes', () => {
    expect(
      edgeOf(task({ deadlineAt: now }), {
        type: 'deadline_passed',
        actor: { kind: 'sweeper', name: 'sweeper-1' },
      }).edge,
    ).toMatchObject({
      to: 'dead',
      reason: 'deadline_exceeded_before_start',
      actor: 'system',
    });
    expect(
      decide(task({ deadlineAt: new Date(now.getTime() + 1) }), {
        type: 'deadline_passed',
        actor: { kind: 'sweeper', name: 'sweeper-1' },
      }),
    ).toMatchObject({
      ok: false,
      refusal: { code: 'deadline_not_reached' },
    });
  });
});
