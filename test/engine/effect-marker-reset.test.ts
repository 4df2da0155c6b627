/**
 * The "effect started" marker (R10) belongs to one attempt: every edge from `leased` back to
 * `queued` whose row resets it (retry_scheduled, lease_expired, snoozed) leaves the stored row
 * with effect_started = false, even when the attempt had set it (a checkpoint, a boundary,
 * recorded evidence). Checked on the row itself, while the task waits in `queued` (the next
 * claim would reset it again and hide a queued row that kept it).
 */
import type { Engine } from '@causeway/engine';
import { defineWorkflow, StepError, snooze, step } from '@causeway/workflow';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { expectLogIsSound, type Gate, gate } from './semantics-support';

const database = useTestDatabase();
const url = () => database().url;

/** The way each attempt marks its effect and then leaves `leased`. */
const hows = ['retry', 'snooze', 'evidence', 'reentrant'] as const;
type How = (typeof hows)[number];

const gates = new Map<string, Gate>();
function gateFor(label: string): Gate {
  let found = gates.get(label);
  if (found === undefined) {
    found = gate();
    gates.set(label, found);
  }
  return found;
}

/** Resolves when the attempt is aborted (its lease lost, or the worker stopping). */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

const input = z.object({ label: z.string(), how: z.enum(hows) });
type Input = z.infer<typeof input>;

/**
 * Attempt 1 marks its effect, waits, then: fails transiently asking for a retry in ten
 * minutes (`retry`), snoozes ten minutes (`snooze`), or stops with its worker and leaves
 * its lease to run out (`evidence`: recorded evidence, so it may run again; `reentrant`).
 */
async function firstAttempt(ctx: {
  readonly input: Input;
  readonly signal: AbortSignal;
  checkpoint(name: string, data?: unknown): Promise<void>;
  boundary(): Promise<void>;
  recordEvidence(externalId: string): Promise<void>;
}) {
  const { label, how } = ctx.input;
  if (how === 'retry') await ctx.checkpoint('half', { done: 1 });
  else if (how === 'evidence') await ctx.recordEvidence(`external-${label}`);
  else await ctx.boundary();
  if (how === 'retry' || how === 'snooze') await gateFor(label).promise;
  else await aborted(ctx.signal);
  if (how === 'snooze') return snooze({ forMs: 600_000, reason: 'the platform is busy' });
  throw new StepError('network', `attempt 1 of ${label} dropped`, { retryAfterMs: 600_000 });
}

const once = defineWorkflow({
  name: 'marker-once',
  input,
  steps: {
    only: step<Input>({
      queue: 'q-marker',
      maxAttempts: 3,
      run: (ctx) => (ctx.attempt === 1 ? firstAttempt(ctx) : { attempt: ctx.attempt }),
    }),
  },
});

const reentrant = defineWorkflow({
  name: 'marker-reentrant',
  input,
  steps: {
    only: step<Input>({
      queue: 'q-marker',
      maxAttempts: 3,
      reentrant: true,
      run: (ctx) => (ctx.attempt === 1 ? firstAttempt(ctx) : { attempt: ctx.attempt }),
    }),
  },
});

const engine = (): Engine => testEngine(url(), { workflows: [once, reentrant] });

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

afterEach(async () => {
  await setDatabaseClockOffset(url(), 0);
});

afterAll(async () => {
  for (const open of gates.values()) open.open();
  await setDatabaseClockOffset(url(), 0);
});

interface MarkerRow extends Record<string, unknown> {
  id: string;
  state: string;
  attempt: number;
  effect_started: boolean;
  evidence: string | null;
  checkpoints: Record<string, unknown> | null;
  run_at_ahead_ms: number | null;
}

async function taskOf(workflowId: string): Promise<MarkerRow | undefined> {
  const [row] = await query<MarkerRow>(
    url(),
    `select id, state, attempt, effect_started, evidence, checkpoints,
        (extract(epoch from run_at - causeway_now()) * 1000)::int as run_at_ahead_ms
       from causeway_tasks where workflow_id = $1`,
    [workflowId],
  );
  return row;
}

async function lastEdge(taskId: string) {
  const [row] = await query<{ from_state: string; to_state: string; reason: string }>(
    url(),
    `select from_state, to_state, reason from causeway_transitions
      where task_id = $1 order by id desc limit 1`,
    [taskId],
  );
  return row;
}

const expectedReason: Record<How, string> = {
  retry: 'retry_scheduled',
  snooze: 'snoozed',
  evidence: 'lease_expired',
  reentrant: 'lease_expired',
};

describe('leased → queued edges that reset the marker leave effect_started false (R10)', () => {
  it.each(hows)('%s', async (how) => {
    const label = `marker-${how}`;
    const cw = engine();
    const name = how === 'reentrant' ? 'marker-reentrant' : 'marker-once';
    const { workflow } = await cw.submit(name, { label, how });
    const worker = await cw.startWorker({ queues: ['q-marker'], concurrency: 1, sweeper: false });
    // The attempt has marked its effect in the row (a fenced write) and is still running.
    const marked = await waitFor(async () => {
      const row = await taskOf(workflow.id);
      return row?.state === 'leased' && row.effect_started ? row : undefined;
    });
    expect(marked.attempt).toBe(1);

    if (how === 'retry' || how === 'snooze') {
      gateFor(label).open();
      await waitFor(async () => (await taskOf(workflow.id))?.state === 'queued', {
        description: `the ${how} edge`,
      });
      await worker.stop();
    } else {
      // The worker stops: the attempt started its effect, so it is not handed back; its lease
      // runs out by the database clock and the sweeper decides.
      await worker.stop();
      expect(await taskOf(workflow.id)).toMatchObject({ state: 'leased', effect_started: true });
      await setDatabaseClockOffset(url(), 10_000);
      expect(await cw.sweep()).toBeGreaterThan(0);
    }

    const queued = await taskOf(workflow.id);
    expect(await lastEdge(marked.id)).toEqual({
      from_state: 'leased',
      to_state: 'queued',
      reason: expectedReason[how],
    });
    expect(queued).toMatchObject({ state: 'queued', attempt: how === 'snooze' ? 0 : 1 });
    expect(queued?.effect_started).toBe(false);
    // What the attempt recorded stays: its checkpoint, its evidence.
    if (how === 'retry') expect(queued?.checkpoints).toEqual({ half: { done: 1 } });
    if (how === 'evidence') expect(queued?.evidence).toBe(`external-${label}`);
    // Retry-After and the snooze put the next attempt ten minutes away: nothing claimed it.
    if (how === 'retry' || how === 'snooze') {
      expect(queued?.run_at_ahead_ms).toBeGreaterThan(500_000);
    }
  });
});

describe('the log of this file', () => {
  it('holds only allowed edges, in unbroken chains, matching every current state (R25)', async () => {
    await expectLogIsSound(url());
  });
});
