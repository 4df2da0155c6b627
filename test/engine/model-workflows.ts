/**
 * The fixed workflows and constants of the engine model test (engine-model.property.test.ts).
 *
 * Three shapes — one step, a chain and a diamond — over two queues, with small attempt
 * limits, reentrant and non-reentrant steps, a step deadline and a workflow deadline; and three
 * with event steps (R37): an approval waiting after a step that runs code, under a workflow
 * deadline, keyed by the input, whose key function throws after a render by the second worker
 * (R58); a first step waiting for a ping (a payload schema and an `onTimeout` output) before a
 * second wait keyed by the ping's payload, under a deadline that falls before or after the
 * second wait's timeout; and a first step keyed by the input whose key function throws for an
 * odd one (R58, at submit). All but the ping wait for `model.approved`, so one event can
 * complete tasks of several. A schedule submits the ping workflow every minute; the approval's
 * last step is delayed (R36). A parent's first step starts kids, one-step child workflows
 * (R43–R47), under a deadline they share. The steps' `run` functions are never called: the
 * test drives claims and settles itself (and returns `startChildren` for the parent).
 */
import {
  defineWorkflow,
  event,
  type ScheduleDefinition,
  schedule,
  step,
  type WorkflowDefinition,
} from '@causeway/workflow';
import { z } from 'zod';

/** Lease length of every claim (R7). Real time never gets near it during a run. */
export const leaseMs = 30_000;

/** The queues the steps use; a claim command names one of them. */
export const modelQueues = ['cpu', 'net'] as const;

/** Holders of the simulated workers (R7: a holder is host + pid + boot id). */
export const workerHolders = ['model-host/101/boot-a', 'model-host/202/boot-b'] as const;

/** Holder name of the sweeper the test runs (`sweeper:<holder>` in the log). */
export const sweeperHolder = 'model-host/303/boot-s';

const input = z.object({ n: z.number().int() });
type Input = z.output<typeof input>;
const run = () => ({});

/** No backoff: a retry is ready at once. */
const immediate = { initialIntervalMs: 0, backoffCoefficient: 1, maximumIntervalMs: 0 };
const seconds = { initialIntervalMs: 4_000, backoffCoefficient: 2, maximumIntervalMs: 20_000 };
const quick = { initialIntervalMs: 1_000, backoffCoefficient: 3, maximumIntervalMs: 5_000 };

const single = defineWorkflow({
  name: 'model-single',
  input,
  steps: {
    only: step<Input>({ queue: 'net', reentrant: false, maxAttempts: 2, backoff: seconds, run }),
  },
});

const chain = defineWorkflow({
  name: 'model-chain',
  input,
  steps: {
    // Declared out of order on purpose: the definition sorts them a → b → c.
    c: step<Input>({
      after: ['b'],
      queue: 'net',
      reentrant: true,
      maxAttempts: 2,
      backoff: seconds,
      deadlineMs: 150_000,
      run,
    }),
    a: step<Input>({ queue: 'cpu', reentrant: true, maxAttempts: 3, backoff: immediate, run }),
    b: step<Input>({
      after: ['a'],
      queue: 'net',
      reentrant: false,
      maxAttempts: 1,
      backoff: quick,
      run,
    }),
  },
});

const diamond = defineWorkflow({
  name: 'model-diamond',
  input,
  // The whole workflow's budget (R29): every step must start within it.
  deadlineMs: 90_000,
  steps: {
    top: step<Input>({ queue: 'cpu', reentrant: false, maxAttempts: 2, backoff: quick, run }),
    left: step<Input>({
      after: ['top'],
      queue: 'net',
      reentrant: true,
      maxAttempts: 2,
      backoff: seconds,
      run,
    }),
    right: step<Input>({
      after: ['top'],
      queue: 'cpu',
      reentrant: false,
      maxAttempts: 3,
      backoff: immediate,
      run,
    }),
    bottom: step<Input>({
      after: ['left', 'right'],
      queue: 'net',
      reentrant: true,
      maxAttempts: 1,
      backoff: quick,
      run,
    }),
  },
});

/** The payload of `model.ping` (R38: a payload the schema refuses is refused with nothing written). */
export const pingPayload = z.object({ ok: z.boolean() });

const approval = defineWorkflow({
  name: 'model-approval',
  input,
  deadlineMs: 150_000,
  steps: {
    render: step<Input>({ queue: 'cpu', reentrant: true, maxAttempts: 2, backoff: immediate, run }),
    approval: event({
      after: ['render'],
      name: 'model.approved',
      // Two workflows in a row wait for different keys; every other one for the same. The key
      // function throws when the render was done by the second worker (R58: the step ends dead
      // instead of waiting): the key reads the output the same decision writes.
      key: (ctx) => {
        const { by } = ctx.results.render as { by: string };
        if (by === workerHolders[1]) throw new Error(`no approver for a render by ${by}`);
        return `k${(ctx.input as Input).n % 2}`;
      },
      timeoutMs: 60_000,
    }),
    publish: step<Input>({
      after: ['approval'],
      queue: 'net',
      reentrant: false,
      maxAttempts: 1,
      backoff: quick,
      // R36: queued this long after the approval (the clock's run_at target reaches it).
      delayMs: 5_000,
      run,
    }),
  },
});

const ping = defineWorkflow({
  name: 'model-ping',
  input,
  // Past the confirm's wait when the ping gave up (45 s + 30 s), within it when it came early:
  // the deadline (R39) or the wait's timeout ends the confirm, by the run.
  deadlineMs: 60_000,
  steps: {
    ping: event({
      name: 'model.ping',
      key: 'p',
      payload: pingPayload,
      timeoutMs: 45_000,
      onTimeout: { ok: false },
    }),
    // Keyed by the upstream result: the ping's payload (or its onTimeout output).
    confirm: event({
      after: ['ping'],
      name: 'model.approved',
      key: (ctx) => `k${(ctx.results.ping as { ok: boolean }).ok ? 1 : 0}`,
      timeoutMs: 30_000,
    }),
  },
});

/**
 * One first step waiting for an approval keyed by the input; an odd one's key function throws,
 * so its step is created pending and ends dead at once (R58).
 */
const keyed = defineWorkflow({
  name: 'model-keyed',
  input,
  steps: {
    wait: event({
      name: 'model.approved',
      key: (ctx) => {
        const { n } = ctx.input as Input;
        if (n % 2 === 1) throw new Error(`no key for workflow ${n}`);
        return `k${n % 4 === 0 ? 0 : 1}`;
      },
      timeoutMs: 20_000,
    }),
  },
});

/** The shapes whose steps all run code (stored-runs.ts draws its random states from them). */
export const codeWorkflows: readonly WorkflowDefinition[] = [
  single,
  chain,
  diamond,
] as unknown as readonly WorkflowDefinition[];

/**
 * A child workflow (R43): one step that runs code, its deadline its parent's (R46); the
 * model's commands end it as they end any step.
 */
export const modelKid = defineWorkflow({
  name: 'model-kid',
  input,
  steps: {
    work: step<Input>({ queue: 'cpu', reentrant: true, maxAttempts: 2, backoff: immediate, run }),
  },
}) as unknown as WorkflowDefinition;

/**
 * A parent (R43–R47) whose first step starts 1–3 kids (the test returns `startChildren` for it,
 * model-children-commands.ts), under a deadline the kids share, and a step after it.
 */
const fan = defineWorkflow({
  name: 'model-fan',
  input,
  deadlineMs: 120_000,
  steps: {
    fan: step<Input>({ queue: 'net', reentrant: false, maxAttempts: 2, backoff: quick, run }),
    sum: step<Input>({
      after: ['fan'],
      queue: 'cpu',
      reentrant: true,
      maxAttempts: 1,
      backoff: immediate,
      run,
    }),
  },
});

export const modelWorkflows: readonly WorkflowDefinition[] = [
  ...codeWorkflows,
  ...([approval, ping, keyed, fan] as unknown as readonly WorkflowDefinition[]),
];

/** Every workflow the engine under test defines: the submitted ones and the kids. */
export const modelEngineWorkflows: readonly WorkflowDefinition[] = [...modelWorkflows, modelKid];

/**
 * A schedule (R40) submitting the ping workflow every minute, read in Europe/Berlin (whole
 * minutes are whole minutes in any zone whose offset is whole hours), catching up with the
 * latest missed tick: runs are an hour of database time apart.
 */
export const modelSchedule: ScheduleDefinition = schedule({
  name: 'model-minutely',
  workflow: ping,
  cron: '* * * * *',
  timezone: 'Europe/Berlin',
  input: { n: -1 },
  catchUp: 'latest',
});
