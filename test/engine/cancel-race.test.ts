import { setTimeout as sleep } from 'node:timers/promises';
import type { Engine, TaskAnswer } from '@causeway/engine';
import {
  type ActorKind,
  aggregateWorkflowState,
  defineWorkflow,
  isAllowedEdge,
  isTerminalTaskState,
  parseActor,
  type ReasonCode,
  type StepContext,
  step,
  type TaskState,
} from '@causeway/workflow/internal';
import pg from 'pg';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';

const database = useTestDatabase();

const rounds = 500;
const lanes = 5;

/** What a step does: wait (signal-aware), maybe pass its boundary and submit an effect, wait. */
const plan = z.object({
  beforeMs: z.number().int().nonnegative(),
  effect: z.boolean(),
  afterMs: z.number().int().nonnegative(),
});
const raceInput = z.object({ plans: z.record(z.string(), plan) });
type RaceInput = z.output<typeof raceInput>;

function raceWorkflows(recordEffect: (ctx: StepContext<RaceInput>) => Promise<void>) {
  const run = async (ctx: StepContext<RaceInput>) => {
    const steps = ctx.input.plans[ctx.step] ?? { beforeMs: 0, effect: false, afterMs: 0 };
    // Before the effect the step honours its signal: a cancel noticed here stops it.
    if (steps.beforeMs > 0) await sleep(steps.beforeMs, undefined, { signal: ctx.signal });
    if (steps.effect) {
      // R13: the boundary confirms a pending cancel before the effect, or marks it started.
      await ctx.boundary();
      await recordEffect(ctx);
    }
    // After the effect the step finishes regardless: the effect is out, so it reports it.
    if (steps.afterMs > 0) await sleep(steps.afterMs);
    return { step: ctx.step, effect: steps.effect };
  };
  const options = {
    reentrant: false,
    maxAttempts: 3,
    backoff: { initialIntervalMs: 5, maximumIntervalMs: 20 },
    run,
  } as const;
  return [
    defineWorkflow({
      name: 'race-single',
      input: raceInput,
      steps: { act: step<RaceInput>(options) },
    }),
    defineWorkflow({
      name: 'race-double',
      input: raceInput,
      steps: {
        first: step<RaceInput>(options),
        second: step<RaceInput>({ ...options, after: ['first'] }),
      },
    }),
  ];
}

/** mulberry32: a small seeded generator, so a failing run can be replayed by seed. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

interface CancelCall {
  readonly round: number;
  readonly kind: 'task' | 'workflow';
  readonly target: string;
  readonly answer?: TaskAnswer | { workflowId: string; state: string; changed: boolean };
  readonly error?: string;
}

interface TaskRow extends Record<string, unknown> {
  id: string;
  workflow_id: string;
  step: string;
  state: TaskState;
  effect_started: boolean;
}

interface TransitionRow extends Record<string, unknown> {
  id: string;
  workflow_id: string;
  task_id: string | null;
  from_state: string | null;
  to_state: string;
  reason: ReasonCode;
  actor: string;
}

describe('cancel racing claims and running steps', () => {
  it(`${rounds} rounds of cancels at random moments: allowed edges only, and no cancelled effect`, async () => {
    const url = database().url;
    const seed = Number(process.env.CAUSEWAY_TEST_SEED ?? Date.now() % 1_000_000);
    const random = seeded(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const between = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));

    const effectsPool = new pg.Pool({ connectionString: url, max: 4 });
    const recordEffect = async (ctx: StepContext<RaceInput>) => {
      await effectsPool.query('insert into effects (task_id, attempt) values ($1, $2)', [
        ctx.taskId,
        ctx.attempt,
      ]);
    };
    // Warnings and errors of both engines are kept for the failure message.
    const engineLog: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => engineLog.push(line) });
    const a = testEngine(url, { workflows: raceWorkflows(recordEffect), poolSize: 6, logger });
    const b = testEngine(url, { workflows: raceWorkflows(recordEffect), poolSize: 6, logger });
    const engines: readonly Engine[] = [a, b];
    const calls: CancelCall[] = [];
    try {
      await a.migrate();
      await query(
        url,
        `create table effects (
           id bigint generated always as identity primary key,
           task_id uuid not null,
           attempt integer not null,
           at timestamptz not null default clock_timestamp())`,
      );
      const workers = [
        await a.startWorker({ concurrency: 6 }),
        await b.startWorker({ concurrency: 6 }),
      ];

      const cancels: Promise<void>[] = [];
      const cancelCall = async (round: number, kind: 'task' | 'workflow', target: string) => {
        const engine = pick(engines);
        const requester = random() < 0.3 ? { operator: 'alice' } : {};
        try {
          const answer =
            kind === 'task'
              ? await engine.cancelTask(target, requester)
              : await engine.cancelWorkflow(target, requester);
          calls.push({ round, kind, target, answer });
        } catch (error) {
          calls.push({ round, kind, target, error: String(error) });
        }
      };

      const lane = async (laneIndex: number) => {
        for (let round = laneIndex; round < rounds; round += lanes) {
          const double = random() < 0.5;
          const stepPlan = () => ({
            beforeMs: pick([0, 0, 1, 2, 3, 5, 8, 12]),
            effect: random() < 0.65,
            afterMs: pick([0, 0, 1, 3, 6]),
          });
          const plans = double ? { first: stepPlan(), second: stepPlan() } : { act: stepPlan() };
          const { workflow } = await pick(engines).submit(double ? 'race-double' : 'race-single', {
            plans,
          });
          const { rows: tasks } = await effectsPool.query<{ id: string; step: string }>(
            'select id, step from causeway_tasks where workflow_id = $1 order by step',
            [workflow.id],
          );
          if (random() < 0.1) continue; // some rounds are never cancelled
          const kind = random() < 0.35 ? 'workflow' : 'task';
          const target = kind === 'workflow' ? workflow.id : pick(tasks).id;
          const delayMs = between(0, 30);
          const repeats = between(1, 3);
          cancels.push(
            (async () => {
              await sleep(delayMs);
              for (let repeat = 0; repeat < repeats; repeat += 1) {
                await cancelCall(round, kind, target);
                if (repeat + 1 < repeats) await sleep(between(0, 15));
              }
            })(),
          );
          await sleep(between(0, 6));
        }
      };
      await Promise.all(Array.from({ length: lanes }, (_, index) => lane(index)));
      await Promise.all(cancels);

      // Everything settles: terminal tasks, or pending ones held back by a dead upstream.
      const settled = async () => {
        const rows = await query<{ state: string; n: number }>(
          url,
          `select state, count(*)::int as n from causeway_workflows group by state`,
        );
        return rows.every((row) => ['succeeded', 'cancelled', 'dead'].includes(row.state));
      };
      try {
        await waitFor(settled, {
          timeoutMs: 60_000,
          intervalMs: 100,
          description: 'every workflow terminal',
        });
      } catch (error) {
        const states = await query(
          url,
          `select state, count(*)::int as n,
                  count(*) filter (where run_at <= causeway_now())::int as ready
             from causeway_tasks group by state order by state`,
        );
        const stuck = await query(
          url,
          `select t.id, t.step, t.state, t.run_at, t.lease_holder, t.lease_expires_at, t.effect_started
             from causeway_tasks t where t.state not in ('succeeded', 'cancelled', 'dead') limit 10`,
        );
        throw new Error(
          `${String(error)} (seed ${seed})\ntasks by state: ${JSON.stringify(states)}\n` +
            `attempts running per worker: ${workers.map((worker) => worker.running.size)}\n` +
            `engine warnings/errors (last 20 of ${engineLog.length}):\n${engineLog.slice(-20).join('')}` +
            `stuck (first 10): ${JSON.stringify(stuck, null, 2)}`,
        );
      }
    } finally {
      await Promise.all(engines.map((engine) => engine.close({ drainMs: 2_000 })));
      await effectsPool.end();
    }

    const tasks = await query<TaskRow>(
      url,
      'select id, workflow_id, step, state, effect_started from causeway_tasks',
    );
    const workflows = await query<{ id: string; name: string; state: string }>(
      url,
      'select id, name, state from causeway_workflows',
    );
    const transitions = await query<TransitionRow>(
      url,
      `select id, workflow_id, task_id, from_state, to_state, reason, actor
         from causeway_transitions order by id`,
    );
    const effects = await query<{ task_id: string; n: number }>(
      url,
      'select task_id, count(*)::int as n from effects group by task_id',
    );
    const effectCount = new Map(effects.map((row) => [row.task_id, row.n]));
    const byTask = new Map<string, TransitionRow[]>();
    const byWorkflow = new Map<string, TransitionRow[]>();
    for (const row of transitions) {
      const map = row.task_id === null ? byWorkflow : byTask;
      const key = row.task_id ?? row.workflow_id;
      const list = map.get(key) ?? [];
      list.push(row);
      map.set(key, list);
    }

    const problems: string[] = [];
    const taskStateById = new Map(tasks.map((task) => [task.id, task]));

    for (const task of tasks) {
      const rows = byTask.get(task.id) ?? [];
      const where = `${task.step} ${task.id}`;
      // Every edge is one the edge table allows, and the edges chain: from = the previous to.
      let previous: string | null = null;
      for (const row of rows) {
        const actorKind: ActorKind = parseActor(row.actor).kind;
        if (
          !isAllowedEdge(
            row.from_state as TaskState | null,
            row.to_state as TaskState,
            row.reason,
            actorKind,
          )
        ) {
          problems.push(
            `${where}: edge ${row.from_state} → ${row.to_state} (${row.reason}) by ${row.actor} is not allowed`,
          );
        }
        if (row.from_state !== previous) {
          problems.push(`${where}: edge from ${row.from_state} follows ${previous}`);
        }
        previous = row.to_state;
      }
      if (previous !== task.state)
        problems.push(`${where}: state ${task.state}, log ends at ${previous}`);

      // Settled: terminal, or pending behind a dead upstream (it waits for a replay).
      if (!isTerminalTaskState(task.state)) {
        const deadUpstream =
          task.step === 'second' &&
          tasks.some(
            (other) =>
              other.workflow_id === task.workflow_id &&
              other.step === 'first' &&
              other.state === 'dead',
          );
        if (!(task.state === 'pending' && deadUpstream)) {
          problems.push(`${where}: not settled, ${task.state}`);
        }
      }

      // A cancel is requested at most once, and a task is cancelled before start at most once.
      const count = (reason: ReasonCode) => rows.filter((row) => row.reason === reason).length;
      if (count('cancel_requested') > 1) {
        problems.push(`${where}: ${count('cancel_requested')} cancel_requested edges`);
      }
      if (count('cancelled_before_start') > 1) {
        problems.push(`${where}: ${count('cancelled_before_start')} cancelled_before_start edges`);
      }

      // The effect side: at most one effect (R35), and an effect is never reported cancelled.
      const effectsOfTask = effectCount.get(task.id) ?? 0;
      if (effectsOfTask > 1) problems.push(`${where}: ${effectsOfTask} effects`);
      if (effectsOfTask > 0) {
        const last = rows.at(-1);
        if (task.state === 'cancelled') {
          problems.push(
            `${where}: its effect was submitted but it ended cancelled (${last?.reason}); log: ` +
              rows.map((row) => `${row.from_state}→${row.to_state}(${row.reason})`).join(', '),
          );
        } else if (task.state === 'succeeded') {
          const cancelFirst = count('cancel_requested') === 1;
          const expected = cancelFirst ? 'cancel_after_submit' : 'completed';
          if (last?.reason !== expected) {
            problems.push(`${where}: succeeded with ${last?.reason}, expected ${expected}`);
          }
        } else if (!(task.state === 'dead' && last?.reason === 'lease_expired_effect_uncertain')) {
          problems.push(`${where}: effect submitted, ended ${task.state} (${last?.reason})`);
        }
        // R10: the row must still say that the effect started.
        if (!task.effect_started) {
          problems.push(
            `${where}: its effect was submitted but effect_started is false (${task.state}); log: ` +
              rows.map((row) => `${row.from_state}→${row.to_state}(${row.reason})`).join(', '),
          );
        }
      }
    }

    // Workflows: their log chains too, and the state is the aggregation of the children.
    for (const workflow of workflows) {
      const rows = byWorkflow.get(workflow.id) ?? [];
      let previous: string | null = null;
      for (const row of rows) {
        if (row.from_state !== previous) {
          problems.push(`workflow ${workflow.id}: edge from ${row.from_state} follows ${previous}`);
        }
        previous = row.to_state;
      }
      const children = tasks
        .filter((task) => task.workflow_id === workflow.id)
        .map((task) => task.state);
      const expected = aggregateWorkflowState(children);
      if (workflow.state !== expected) {
        problems.push(`workflow ${workflow.id}: ${workflow.state}, children say ${expected}`);
      }
    }

    // Cancel answers: a repeat never changes anything again; every call got an answer.
    const changedPerTarget = new Map<string, number>();
    for (const call of calls) {
      if (call.error !== undefined) {
        problems.push(
          `round ${call.round}: cancel ${call.kind} ${call.target} threw ${call.error}`,
        );
        continue;
      }
      if (call.answer?.changed) {
        changedPerTarget.set(call.target, (changedPerTarget.get(call.target) ?? 0) + 1);
      }
      if (call.kind === 'task' && call.answer !== undefined && !call.answer.changed) {
        const refusal = (call.answer as TaskAnswer).refusal;
        if (
          !['cancel_already_requested', 'terminal_state', 'effect_already_submitted'].includes(
            refusal ?? '',
          )
        ) {
          problems.push(
            `round ${call.round}: unchanged cancel answered ${JSON.stringify(call.answer)}`,
          );
        }
        // R15: the answer is the task's state at that moment; a terminal refusal names it.
        if (refusal === 'terminal_state' && !isTerminalTaskState(call.answer.state as TaskState)) {
          problems.push(`round ${call.round}: terminal_state refusal for ${call.answer.state}`);
        }
      }
    }
    for (const [target, changed] of changedPerTarget) {
      if (changed > 1) problems.push(`cancel of ${target} changed something ${changed} times`);
      const task = taskStateById.get(target);
      if (task !== undefined && changed === 1) {
        const cancelEdges = (byTask.get(target) ?? []).filter(
          (row) =>
            (row.reason === 'cancel_requested' || row.reason === 'cancelled_before_start') &&
            !row.actor.startsWith('worker') &&
            row.actor !== 'system',
        );
        if (cancelEdges.length !== 1) {
          problems.push(
            `task ${target}: cancel answered changed, ${cancelEdges.length} cancel edges`,
          );
        }
      }
    }

    // What the run exercised (diagnostics) and that it did exercise the races.
    const reasonCounts: Record<string, number> = {};
    for (const row of transitions) {
      if (row.task_id !== null) reasonCounts[row.reason] = (reasonCounts[row.reason] ?? 0) + 1;
    }
    const finalStates: Record<string, number> = {};
    for (const task of tasks) finalStates[task.state] = (finalStates[task.state] ?? 0) + 1;
    console.info(
      `[cancel-race] seed ${seed}: ${workflows.length} workflows, ${tasks.length} tasks, ` +
        `${calls.length} cancel calls, ${effects.length} tasks with an effect\n` +
        `  final task states: ${JSON.stringify(finalStates)}\n  task edges: ${JSON.stringify(reasonCounts)}`,
    );
    if (problems.length > 0) {
      const kinds: Record<string, number> = {};
      for (const problem of problems) {
        const kind = problem
          .replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, 'ID')
          .replace(/\d+/g, 'N')
          .replace(/; log: .*/, '');
        kinds[kind] = (kinds[kind] ?? 0) + 1;
      }
      console.error(`[cancel-race] seed ${seed}: ${problems.length} problems by kind:`, kinds);
    }
    expect(problems, `seed ${seed}`).toEqual([]);
    expect(workflows).toHaveLength(rounds);
    expect(await logMismatches(url)).toEqual([]);
    // The run hit both sides of the race: cancels before the claim and during the run.
    expect(reasonCounts.cancelled_before_start ?? 0).toBeGreaterThan(0);
    expect(reasonCounts.cancel_requested ?? 0).toBeGreaterThan(0);
    expect(reasonCounts.completed ?? 0).toBeGreaterThan(0);
  }, 90_000);
});
