/**
 * The fixed workflows and constants of the engine model test (engine-model.property.test.ts).
 *
 * Three shapes — one step, a chain and a diamond — over two queues, with small attempt
 * limits, reentrant and non-reentrant steps, a step deadline and a workflow deadline. The
 * steps' `run` functions are never called: the test drives claims and settles itself.
 */
import { defineWorkflow, step, type WorkflowDefinition } from '@causeway/workflow';
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

export const modelWorkflows: readonly WorkflowDefinition[] = [
  single,
  chain,
  diamond,
] as unknown as readonly WorkflowDefinition[];
