/**
 * What the compiler knows of a workflow declared with `workflow(...).step(...)`. These checks
 * are types: `pnpm run typecheck` (part of `pnpm test`) fails when an inference breaks, and
 * each `@ts-expect-error` fails when the mistake below it stops being an error.
 */
import {
  awaitReceipt,
  type DeepReadonly,
  type StepContext,
  type StepDefinition,
  type StoredJson,
  send,
  snooze,
  step,
  type TypedStepDefinition,
  type UpstreamResult,
  type WorkflowDefinition,
  workflow,
} from '@causeway/workflow';
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';

const input = z.object({
  noteId: z.string(),
  tags: z.array(z.string()),
  title: z.string().optional(),
  version: z.number().int().default(1),
});
type Input = DeepReadonly<z.output<typeof input>>;

const base = workflow({
  name: 'typed',
  input,
  idempotencyKey: (given) => {
    expectTypeOf(given).toEqualTypeOf<z.output<typeof input>>();
    return `note:${given.noteId}`;
  },
})
  .step('render', {
    queue: 'cpu',
    reentrant: true,
    maxAttempts: 3,
    backoff: { initialIntervalMs: 10 },
    timeoutMs: 5_000,
    deadlineMs: 60_000,
    run: (ctx) => {
      expectTypeOf(ctx.input).toEqualTypeOf<Input>();
      expectTypeOf(ctx.input).toEqualTypeOf<{
        readonly noteId: string;
        readonly tags: readonly string[];
        readonly title?: string | undefined;
        readonly version: number;
      }>();
      expectTypeOf(ctx.results).toEqualTypeOf<Record<never, never>>();
      // @ts-expect-error nothing runs before the first step
      ctx.results.review;
      return { html: `<h1>${ctx.input.title}</h1>`, bytes: 12 };
    },
  })
  .step('review', {
    after: ['render'],
    run: async (ctx) => {
      expectTypeOf(ctx.results.render).toEqualTypeOf<{
        readonly html: string;
        readonly bytes: number;
      }>();
      // @ts-expect-error a result is read-only
      ctx.results.render.html = '';
      return { approved: ctx.results.render.html.length > 0 };
    },
  });

describe('workflow(...).step(...)', () => {
  it('types ctx.input from the schema and ctx.results by upstream step', () => {
    base.step('publish', {
      after: ['review'],
      run: (ctx) => {
        expectTypeOf(ctx.results.review).toEqualTypeOf<{ readonly approved: boolean }>();
        // Transitively upstream: publish runs after review, which runs after render.
        expectTypeOf(ctx.results.render.html).toEqualTypeOf<string>();
        expectTypeOf(ctx).toExtend<StepContext<z.output<typeof input>>>();
        return ctx.results.review.approved;
      },
    });
  });

  it('makes reading a step that is not upstream an error', () => {
    base.step('audit', { after: ['render'], run: () => ({ audited: true }) }).step('notify', {
      after: ['audit'],
      run: (ctx) => {
        expectTypeOf(ctx.results.render).toEqualTypeOf<{
          readonly html: string;
          readonly bytes: number;
        }>();
        // @ts-expect-error review is not upstream of notify (a sibling branch)
        ctx.results.review;
        // @ts-expect-error no step of this name
        ctx.results.nope;
      },
    });
  });

  it('makes an `after` that names no earlier step an error', () => {
    base.step('publish', {
      // @ts-expect-error no step is named nope
      after: ['nope'],
      run: () => null,
    });
    workflow({ name: 'w', input }).step('first', {
      // @ts-expect-error a step cannot run after itself (it is not declared yet)
      after: ['first'],
      run: () => null,
    });
  });

  it('takes the options of step(...) and no others', () => {
    // @ts-expect-error not a step option
    base.step('publish', { retries: 3, run: () => null });
  });

  it('makes a repeated step name an error', () => {
    // @ts-expect-error render is declared already
    base.step('render', { run: () => null });
    const name: string = 'any';
    // @ts-expect-error a name the compiler does not know cannot be checked
    base.step(name, { run: () => null });
  });

  it('builds a WorkflowDefinition of the schema and of its result, its sink step output', () => {
    expectTypeOf(base.build()).toEqualTypeOf<
      WorkflowDefinition<typeof input, { readonly approved: boolean }>
    >();
    // A definition whose result is known is still a definition of the schema, and back.
    expectTypeOf(base.build()).toExtend<WorkflowDefinition<typeof input>>();
    expectTypeOf<WorkflowDefinition<typeof input>>().toExtend<
      WorkflowDefinition<typeof input, { readonly approved: boolean }>
    >();
  });

  it('types what a downstream step reads from what run returns', () => {
    base
      .step('waits', { run: () => awaitReceipt({ receiptId: 'r', timeoutMs: 1_000 }) })
      .step('sends', { run: async () => send('mail', {}) })
      .step('maybe', {
        run: (ctx) =>
          ctx.attempt > 1 ? { done: true } : awaitReceipt({ receiptId: 'r', timeoutMs: 1 }),
      })
      .step('nothing', { run: () => {} })
      .step('dated', { run: () => ({ at: new Date(), skip: undefined, when: [new Date()] }) })
      .step('after-all', {
        after: ['waits', 'sends', 'maybe', 'nothing', 'dated'],
        run: (ctx) => {
          // The receipt's result: only the external system knows its type.
          expectTypeOf(ctx.results.waits).toBeUnknown();
          expectTypeOf(ctx.results.sends).toBeUnknown();
          expectTypeOf(ctx.results.maybe).toBeUnknown();
          // The output as the engine stores it, as JSON.
          expectTypeOf(ctx.results.nothing).toEqualTypeOf<null>();
          expectTypeOf(ctx.results.dated).toEqualTypeOf<{
            readonly at: string;
            readonly when: readonly string[];
          }>();
        },
      });
    expectTypeOf<UpstreamResult<Promise<{ a: number } | undefined>>>().toEqualTypeOf<{
      readonly a: number;
    } | null>();
    // biome-ignore lint/suspicious/noExplicitAny: what an `any` output gives downstream
    expectTypeOf<UpstreamResult<any>>().toBeUnknown();
    expectTypeOf<
      StoredJson<{ a: string | undefined; f: () => void; n: [1, undefined] }>
    >().toEqualTypeOf<{ readonly a: string | undefined; readonly n: readonly [1, null] }>();
  });

  it('types a step that may snooze by the output it returns once it runs again (R36)', () => {
    workflow({ name: 'types-snooze', input })
      .step('poll', {
        run: (ctx) =>
          ctx.attempt > 1 ? { rendered: true } : snooze({ forMs: 1_000, reason: 'later' }),
      })
      .step('next', {
        after: ['poll'],
        run: (ctx) => {
          expectTypeOf(ctx.results.poll).toEqualTypeOf<{ readonly rendered: boolean }>();
          return null;
        },
      });
  });

  it('adds a step of another kind whose type carries its after and output', () => {
    const approval = step({ after: ['review'], run: () => ({ ok: true }) }) as TypedStepDefinition<
      StepDefinition,
      'review',
      { readonly ok: boolean }
    >;
    base.add('approval', approval).step('publish', {
      after: ['approval'],
      run: (ctx) => {
        expectTypeOf(ctx.results.approval).toEqualTypeOf<{ readonly ok: boolean }>();
        expectTypeOf(ctx.results.render.html).toEqualTypeOf<string>();
      },
    });
    const early = step({ after: ['later'], run: () => 1 }) as TypedStepDefinition<
      StepDefinition,
      'later',
      number
    >;
    // @ts-expect-error its after names no earlier step
    base.add('early', early);
  });
});
