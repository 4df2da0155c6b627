/**
 * The rate-limited work of the R51 surfaces' tests (./rate-limited.ts fills it): a keyed limit
 * of 3 a minute, a step that hears "HTTP 429" and pauses its key for 30 s, and a declared limit
 * nothing spends. No test framework here: the CLI tests' server process declares the limits.
 */
import { defineWorkflow, rateLimit, StepError, step } from '@causeway/workflow';
import { z } from 'zod';

const input = z.object({ account: z.string(), n: z.number().int() });
type Input = z.output<typeof input>;

export const rateQueue = 'q-rate-surface';
export const throttleQueue = 'q-rate-surface-429';

export const rateLimits = [
  rateLimit({ name: 'posts', limit: 3, periodMs: 60_000 }),
  rateLimit({ name: 'exports', limit: 100, periodMs: 3_600_000 }),
];

export const posting = defineWorkflow({
  name: 'rate-surface-post',
  input,
  steps: {
    post: step<Input>({
      queue: rateQueue,
      rateLimit: { name: 'posts', key: (ctx) => ctx.input.account },
      run: () => null,
    }),
  },
});

export const throttled = defineWorkflow({
  name: 'rate-surface-429',
  input,
  steps: {
    post: step<Input>({
      queue: throttleQueue,
      maxAttempts: 3,
      rateLimit: { name: 'posts', key: (ctx) => ctx.input.account },
      run: () => {
        throw new StepError('throttled', 'HTTP 429', { retryAfterMs: 30_000 });
      },
    }),
  },
});

export const exporting = defineWorkflow({
  name: 'rate-surface-export',
  input,
  steps: {
    run: step<Input>({ queue: 'q-rate-export', rateLimit: { name: 'exports' }, run: () => null }),
  },
});

export const rateWorkflows = [posting, throttled, exporting];
