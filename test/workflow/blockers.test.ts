import { decideBlocker, terminalTaskStates } from '@causeway/workflow/internal';
import { describe, expect, it } from 'vitest';
import { at, edge, input, policy, task, worker } from './blocker-facts';

/**
 * The pure blocker decision, case by case: the situations a real engine reaches only by
 * chance or slowly (a claimable task nobody claims for long, a live holder whose lease ran
 * out, many workers, deadlines that come first), and the sentence of each.
 */
describe('decideBlocker', () => {
  it('gives a terminal task no blocker', () => {
    for (const state of terminalTaskStates) {
      expect(decideBlocker(input({ task: task(state) }))).toBeNull();
    }
  });

  it('claimable: a live worker serving the queue and defining every step has a free slot', () => {
    const blocker = decideBlocker(
      input({ task: task('queued', { snapshot: { runAt: at(-3_000) } }) }),
    );
    expect(blocker).toEqual({
      taskId: 't1',
      step: 'publish',
      code: 'claimable',
      message:
        'publish: due since 11:59:57 (waiting 3 s); w1 serves queue "io" with 1 free slot: the next claim takes it',
      until: null,
      facts: { queue: 'io', readySince: '2026-05-04T11:59:57.000Z', freeSlots: 1 },
    });
  });

  it('claimable for long: points at failing claims or a held workflow row', () => {
    const blocker = decideBlocker(
      input({ task: task('queued', { snapshot: { runAt: at(-95_000) } }) }),
    );
    expect(blocker?.code).toBe('claimable');
    expect(blocker?.message).toContain('(waiting 95 s)');
    expect(blocker?.message).toContain(
      "it has waited longer than a claim takes: look for failing claims in the worker's logs, or a long transaction holding its workflow row",
    );
  });

  it('counts free slots per worker: a prefetching worker over its slots does not hide another one free', () => {
    const workers = [
      worker('w1', { queues: [{ name: 'io', slots: 2 }] }),
      worker('w2', { queues: [{ name: 'io', slots: 1 }] }),
    ];
    const free = decideBlocker(input({ workers, queue: { leasedByHolder: { w1: 3 } } }));
    expect(free).toMatchObject({ code: 'claimable', facts: { freeSlots: 1 } });
    expect(free?.message).toContain('w2 serves queue "io" with 1 free slot');
    const full = decideBlocker(
      input({ workers, queue: { leasedByHolder: { w1: 3, w2: 1 }, oldestReadyAt: at(-120_000) } }),
    );
    expect(full).toMatchObject({
      code: 'queue_full',
      facts: {
        queue: 'io',
        workers: 2,
        slots: 3,
        leased: 4,
        oldestReadyAt: at(-120_000).toISOString(),
      },
    });
    expect(full?.message).toBe(
      'publish: due since 12:00:00 (waiting 0 s), but all 3 slots of queue "io" on the 2 live workers that can run it are busy (4 leased); the queue\'s oldest due task has waited 2 min',
    );
  });

  it('no_worker: names at most five workers and counts the rest; stale ones do not serve', () => {
    const workers = [
      ...Array.from({ length: 7 }, (_, n) =>
        worker(`w${n}`, { queues: [{ name: 'cpu', slots: 1 }] }),
      ),
      worker('gone', { live: false }),
    ];
    const blocker = decideBlocker(input({ workers }));
    expect(blocker?.code).toBe('no_worker');
    expect(blocker?.message).toBe(
      'publish: due since 12:00:00 (waiting 0 s), but no live worker serves queue "io" (live workers: w0 serves cpu; w1 serves cpu; w2 serves cpu; w3 serves cpu; w4 serves cpu and 2 more)',
    );
    expect(blocker?.facts.workers).toHaveLength(7);
  });

  it('no_worker: a worker of the queue that lacks a step of the workflow, or defines another', () => {
    const blocker = decideBlocker(
      input({
        workers: [
          worker('old', { workflows: [{ name: 'note', steps: ['render'] }] }),
          worker('other', { workflows: [{ name: 'digest', steps: ['send'] }] }),
          worker('empty', { workflows: [] }),
        ],
      }),
    );
    expect(blocker?.message).toBe(
      'publish: due since 12:00:00 (waiting 0 s), but no live worker serving queue "io" defines workflow note with all of its steps (old lacks step publish; other defines digest; empty defines no workflow)',
    );
  });

  it('a due task past its deadline says the sweeper ends it, and when none runs', () => {
    const due = task('queued', { snapshot: { deadlineAt: at(-1_000) } });
    expect(decideBlocker(input({ task: due }))?.message).toContain(
      '; its deadline passed at 11:59:59: the sweeper ends it dead (deadline_exceeded_before_start)',
    );
    const unswept = decideBlocker(
      input({ task: due, workers: [worker('w1', { sweeper: false })] }),
    );
    expect(unswept?.message).toMatch(
      /deadline_exceeded_before_start\); but no live worker runs the sweeper, so nothing acts on it until one starts$/,
    );
  });

  it('not_due: the deadline that comes before the due time ends it, and is its until', () => {
    const blocker = decideBlocker(
      input({
        task: task('queued', {
          snapshot: { runAt: at(3_600_000), deadlineAt: at(600_000) },
          lastEdge: edge('upstream_succeeded', {
            detail: { runAt: at(3_600_000), delayMs: 3_600_000 },
          }),
        }),
      }),
    );
    expect(blocker).toMatchObject({
      code: 'not_due',
      until: at(600_000),
      facts: { cause: 'delay', deadlineAt: at(600_000).toISOString() },
    });
    expect(blocker?.message).toBe(
      'publish: queued, due 13:00:00 (in 60 min): delayed 1 h after its upstream steps; its deadline 12:10:00 comes first: then it ends dead (deadline_exceeded_before_start)',
    );
  });

  it('not_due: a backoff after a lost lease or a rejected receipt says so', () => {
    const afterLease = decideBlocker(
      input({
        task: task('queued', {
          snapshot: { runAt: at(30_000), attempt: 2 },
          lastEdge: edge('lease_expired', { errorCategory: 'unknown', errorSummary: 'x' }),
        }),
      }),
    );
    expect(afterLease?.message).toBe(
      "publish: queued, due 12:00:30 (in 30 s): retry backoff after attempt 2's lease expired without renewal",
    );
    const rejected = decideBlocker(
      input({
        task: task('queued', {
          snapshot: { runAt: at(30_000), attempt: 1 },
          lastEdge: edge('receipt_rejected', {
            errorCategory: 'unavailable',
            errorSummary: 'busy',
          }),
        }),
      }),
    );
    expect(rejected?.message).toContain(
      "after attempt 1's receipt was rejected (unavailable: busy)",
    );
    expect(rejected?.facts).toMatchObject({ cause: 'backoff', errorCategory: 'unavailable' });
  });

  it('upstream_pending: a dead upstream step holds it until an operator replays that step', () => {
    const blocker = decideBlocker(
      input({
        task: task('pending'),
        upstream: [
          { step: 'render', state: 'dead' },
          { step: 'check', state: 'succeeded' },
          { step: 'review', state: 'waiting' },
        ],
      }),
    );
    expect(blocker).toMatchObject({
      code: 'upstream_pending',
      until: null,
      facts: {
        upstream: [
          { step: 'render', state: 'dead' },
          { step: 'review', state: 'waiting' },
        ],
      },
    });
    expect(blocker?.message).toBe(
      'publish: waiting for upstream steps render (dead), review (waiting); render is dead, so it runs only after an operator replays it',
    );
    const unknown = decideBlocker(input({ task: task('pending'), upstream: null }));
    expect(unknown?.message).toBe(
      'publish: waiting for upstream steps (this process does not define workflow note, so it cannot say which)',
    );
  });

  const leased = (overrides: Parameters<typeof task>[1] = {}) =>
    task('leased', {
      leaseHolder: 'w1',
      leaseExpiresAt: at(20_000),
      lastEdge: edge('lease_acquired', { at: at(-125_000), attempt: 1 }),
      ...overrides,
      snapshot: { attempt: 1, ...overrides.snapshot },
    });

  it('running: the live holder, since when, and the attempt timeout', () => {
    const blocker = decideBlocker(
      input({ task: leased(), policy: policy({ timeoutMs: 300_000 }) }),
    );
    expect(blocker).toEqual({
      taskId: 't1',
      step: 'publish',
      code: 'running',
      message:
        'publish: running on w1 since 11:57:55 (2 min), attempt 1 of 3; the worker renews its lease (next expiry 12:00:20); the attempt times out 5 min after it started',
      until: null,
      facts: {
        holder: 'w1',
        since: at(-125_000).toISOString(),
        leaseExpiresAt: at(20_000).toISOString(),
        attempt: 1,
        maxAttempts: 3,
      },
    });
  });

  it('lease_stale: a live holder whose lease ran out, and a holder the registry never saw', () => {
    const expired = decideBlocker(input({ task: leased({ leaseExpiresAt: at(-2_000) }) }));
    expect(expired).toMatchObject({ code: 'lease_stale', until: at(-2_000) });
    expect(expired?.message).toBe(
      "publish: leased by w1, which still heartbeats but did not renew the lease (attempt 1); the lease expired at 11:59:58, so the sweeper's next pass queues it again for attempt 2 of 3 (lease_expired)",
    );
    const unknown = decideBlocker(input({ task: leased({ leaseHolder: 'ghost' }), workers: [] }));
    expect(unknown?.facts).toMatchObject({
      holder: 'ghost',
      heartbeatAt: null,
      reason: 'lease_expired',
    });
    expect(unknown?.message).toBe(
      'publish: leased by ghost, which has no row in the worker registry (attempt 1); the lease expires at 12:00:20, then the sweeper queues it again for attempt 2 of 3 (lease_expired); but no live worker runs the sweeper, so nothing acts on it until one starts',
    );
  });

  it("lease_stale: what the sweeper then does is the machine's lease-expiry decision", () => {
    const gone = [worker('w1', { live: false, heartbeatAt: at(-45_000) })];
    const started = { effectStarted: true, attempt: 1 };
    const cases = [
      {
        snapshot: started,
        policy: policy({ reentrant: true }),
        outcome: 'retry',
        reason: 'lease_expired',
      },
      {
        snapshot: started,
        policy: policy(),
        outcome: 'dead',
        reason: 'lease_expired_effect_uncertain',
      },
      {
        snapshot: { ...started, evidence: 'ext-9' },
        policy: policy(),
        outcome: 'retry',
        reason: 'lease_expired',
        says: 'queues it again to ask for the outcome of its effect (evidence ext-9), not to resubmit (lease_expired)',
      },
      {
        snapshot: { attempt: 3 },
        policy: policy({ reentrant: true }),
        outcome: 'dead',
        reason: 'attempts_exhausted',
        says: 'marks it dead (attempts_exhausted: attempt 3 was the last of 3)',
      },
      {
        snapshot: { attempt: 1, deadlineAt: at(10_000) },
        policy: policy({ reentrant: true }),
        outcome: 'dead',
        reason: 'deadline_exceeded',
      },
    ] as const;
    for (const { snapshot, policy: stepPolicy, outcome, reason, ...rest } of cases) {
      const blocker = decideBlocker(
        input({ task: leased({ snapshot }), workers: gone, policy: stepPolicy }),
      );
      expect(blocker?.code).toBe('lease_stale');
      expect(blocker?.facts, JSON.stringify(snapshot)).toMatchObject({
        reason,
        heartbeatAt: at(-45_000).toISOString(),
      });
      expect(blocker?.facts.then).toBe(outcome);
      expect(blocker?.message).toContain(
        'whose worker stopped heartbeating at 11:59:15 (45 s ago)',
      );
      if ('says' in rest) expect(blocker?.message).toContain(rest.says);
    }
    const undefinedStep = decideBlocker(input({ task: leased(), workers: gone, policy: null }));
    expect(undefinedStep?.facts.then).toBeNull();
    expect(undefinedStep?.message).toContain(
      "then the sweeper settles it by the step's policy (this process does not define the step)",
    );
  });

  const cancelled = (overrides: Parameters<typeof task>[1] = {}) =>
    task('cancel_requested', {
      leaseHolder: 'w1',
      leaseExpiresAt: at(20_000),
      lastEdge: edge('cancel_requested', {
        at: at(-5_000),
        actor: 'operator:alice',
        detail: { operatorReason: 'wrong version' },
      }),
      ...overrides,
      snapshot: { attempt: 1, ...overrides.snapshot },
    });

  it('cancel_pending: who asked, and what lease expiry does if the step never confirms', () => {
    const blocker = decideBlocker(
      input({ task: cancelled({ snapshot: { effectStarted: true } }) }),
    );
    expect(blocker).toMatchObject({
      code: 'cancel_pending',
      until: at(20_000),
      facts: {
        holder: 'w1',
        requestedAt: at(-5_000).toISOString(),
        requestedBy: 'operator:alice',
        reason: 'lease_expired_effect_uncertain',
      },
    });
    expect(blocker?.facts.then).toBe('dead');
    expect(blocker?.message).toBe(
      'publish: cancel requested (by alice: "wrong version") at 11:59:55 (5 s ago); w1 has not reached a boundary yet (attempt 1); the lease is no longer renewed: unless the step confirms the cancel or finishes first, at 12:00:20 the sweeper marks it dead (lease_expired_effect_uncertain: its effect started and the step is not reentrant, so it is never run again blindly)',
    );
  });

  it('a cancel whose worker is gone is lease_stale: the sweeper confirms it when nothing started', () => {
    const blocker = decideBlocker(
      input({ task: cancelled(), workers: [worker('w1', { live: false })] }),
    );
    expect(blocker?.code).toBe('lease_stale');
    expect(blocker?.facts.then).toBe('cancel');
    expect(blocker?.message).toContain(
      'publish: cancel requested (by alice: "wrong version"), leased by w1',
    );
    expect(blocker?.message).toContain(
      'then the sweeper cancels it (lease_expired: no effect started)',
    );
  });

  it('waiting_for_event: an onTimeout output, a key that could not be computed, a deadline first', () => {
    const waiting = (overrides: Parameters<typeof task>[1] = {}) =>
      task('waiting', {
        eventName: 'note.approved',
        eventKey: 'n1',
        waitSince: at(-60_000),
        lastEdge: edge('event_awaited', { at: at(-60_000) }),
        ...overrides,
        snapshot: { runAt: null, waitTimeoutAt: at(2 * 86_400_000), ...overrides.snapshot },
      });
    const eventPolicy = policy({ wait: { timeoutMs: 2 * 86_400_000, succeedsOnTimeout: true } });
    const succeeds = decideBlocker(input({ task: waiting(), policy: eventPolicy }));
    expect(succeeds).toMatchObject({ code: 'waiting_for_event', until: at(2 * 86_400_000) });
    expect(succeeds?.facts.then).toBe('succeed');
    expect(succeeds?.message).toBe(
      'publish: waiting for note.approved (key n1) since 11:59:00 (60 s), gives up Wed 2026-05-06 12:00:00: then it succeeds with its declared onTimeout output',
    );
    const keyless = decideBlocker(
      input({ task: waiting({ eventKey: null }), policy: eventPolicy }),
    );
    expect(keyless?.message).toContain(
      'waiting for note.approved (its key could not be computed, so no event can match; the edge says why)',
    );
    const deadline = decideBlocker(
      input({ task: waiting({ snapshot: { deadlineAt: at(3_600_000) } }), policy: eventPolicy }),
    );
    expect(deadline).toMatchObject({ until: at(3_600_000) });
    expect(deadline?.facts.then).toBe('dead');
    expect(deadline?.message).toContain(
      "; the workflow's deadline 13:00:00 comes first: then it ends dead (deadline_exceeded)",
    );
  });

  it('awaiting_receipt: the outbox message still being delivered, and a reentrant retry after the timeout', () => {
    const blocker = decideBlocker(
      input({
        task: task('awaiting_receipt', {
          receiptId: 'r-1',
          receiptDeadlineAt: at(600_000),
          lastEdge: edge('submitted_awaiting_receipt', { at: at(-30_000) }),
          sending: [{ channel: 'platform', attempts: 3, lastError: 'HTTP 503' }],
          snapshot: { attempt: 1 },
        }),
        policy: policy({ reentrant: true }),
      }),
    );
    expect(blocker).toMatchObject({
      code: 'awaiting_receipt',
      until: at(600_000),
      facts: { sending: [{ channel: 'platform', attempts: 3, lastError: 'HTTP 503' }] },
    });
    expect(blocker?.facts.then).toBe('retry');
    expect(blocker?.message).toBe(
      'publish: effect submitted at 11:59:30 (30 s ago), awaiting its receipt r-1; the outbox is still delivering its message on platform (3 attempts, last error: HTTP 503); if none comes by 12:10:00, the sweeper queues it again for attempt 2 of 3 (receipt_timeout)',
    );
  });
});
