/**
 * What the compiler knows of a map step (R44, R45): `workflow(...).map(...)` types `over` and
 * `input` by the input and upstream results, checks what each child is given against the child
 * workflow's input schema, and types the step's output as the children's results (with
 * `tolerate`, their outcomes); `map({...})` does the same for `defineWorkflow` and `.add`, and
 * `startChildren` checks inputs against a definition. Type checks: `pnpm run typecheck` fails
 * when an inference breaks, and each `@ts-expect-error` when its mistake stops being one.
 */
import {
  type ChildOutcome,
  type DeepReadonly,
  defineWorkflow,
  type MapContext,
  map,
  type StepContext,
  startChild,
  startChildren,
  step,
  type WorkflowDefinition,
  workflow,
} from '@causeway/workflow';
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';

const platform = z.object({ platform: z.enum(['mastodon', 'bluesky']), text: z.string() });

/** A child workflow with one sink step: its result is that step's output. */
const publishToPlatform = workflow({ name: 'publish-to-platform', input: platform })
  .step('post', { run: (ctx) => ({ url: `https://${ctx.input.platform}/1`, chars: 1 }) })
  .build();
type Posted = { readonly url: string; readonly chars: number };

const note = z.object({ noteId: z.string(), platforms: z.array(platform.shape.platform) });
type NoteInput = DeepReadonly<z.output<typeof note>>;

const elementsMistake = {
  mistake: 'the elements are not the child workflow input: give input',
} as const;
const inputMistake = { mistake: 'input gives what the child workflow input is not' } as const;

describe('the result a definition carries (R45)', () => {
  it('is its only sink step output, or an object of its sink steps outputs', () => {
    expectTypeOf(publishToPlatform).toEqualTypeOf<WorkflowDefinition<typeof platform, Posted>>();
    const twoSinks = workflow({ name: 'two-sinks', input: note })
      .step('render', { run: () => ({ html: '' }) })
      .step('archive', { after: ['render'], run: () => 1 })
      .step('notify', { after: ['render'], run: () => 'sent' as const })
      .build();
    expectTypeOf(twoSinks).toEqualTypeOf<
      WorkflowDefinition<typeof note, { readonly archive: number; readonly notify: 'sent' }>
    >();
  });
});

describe('map steps in the builder', () => {
  it('types over and input by the upstream results, and the output as the results', () => {
    workflow({ name: 'publish-note', input: note })
      .step('render', { run: (ctx) => ({ text: `note ${ctx.input.noteId}` }) })
      .map('publish-each', {
        after: ['render'],
        over: (ctx) => {
          expectTypeOf(ctx).toEqualTypeOf<
            MapContext<NoteInput, { readonly render: { readonly text: string } }>
          >();
          // @ts-expect-error publish-each is not upstream of its own list
          void ctx.results['publish-each'];
          return ctx.input.platforms;
        },
        workflow: publishToPlatform,
        input: (element, index, ctx) => {
          expectTypeOf(element).toEqualTypeOf<'mastodon' | 'bluesky'>();
          expectTypeOf(index).toEqualTypeOf<number>();
          return { platform: element, text: ctx.results.render.text };
        },
      })
      .step('report', {
        after: ['publish-each'],
        run: (ctx) => {
          expectTypeOf(ctx.results['publish-each']).toEqualTypeOf<readonly Posted[]>();
          expectTypeOf(ctx.results.render.text).toEqualTypeOf<string>();
          return ctx.results['publish-each'].length;
        },
      })
      .build();
  });

  it('lists outcomes instead of results when tolerate is given', () => {
    workflow({ name: 'publish-tolerant', input: note })
      .map('publish-each', {
        over: (ctx) => ctx.input.platforms.map((name) => ({ platform: name, text: 'hi' })),
        workflow: publishToPlatform,
        tolerate: { failures: 1 },
      })
      .step('report', {
        after: ['publish-each'],
        run: (ctx) => {
          expectTypeOf(ctx.results['publish-each']).toEqualTypeOf<
            readonly ChildOutcome<Posted>[]
          >();
          const [first] = ctx.results['publish-each'];
          expectTypeOf(first?.result).toEqualTypeOf<Posted | undefined>();
          expectTypeOf(first?.state).toEqualTypeOf<
            'succeeded' | 'dead' | 'cancelled' | undefined
          >();
          return null;
        },
      })
      .build();
  });

  it('keeps the literals a list or an input is written with', () => {
    const base = workflow({ name: 'publish-literal', input: note });
    base.map('written', {
      over: () => [{ platform: 'bluesky', text: 'a' }],
      workflow: publishToPlatform,
    });
    base.map('made', {
      over: () => [1, 2],
      workflow: publishToPlatform,
      input: (n) => ({ platform: 'mastodon', text: `${n}` }),
    });
  });

  it("refuses children given what their workflow's schema does not take", () => {
    const base = workflow({ name: 'publish-bad', input: note }).step('render', {
      run: () => ({ text: '' }),
    });
    const elements = base.map('elements-are-not-inputs', {
      over: (ctx) => ctx.input.platforms,
      workflow: publishToPlatform,
    });
    expectTypeOf(elements).toEqualTypeOf(elementsMistake);
    // @ts-expect-error the mistake is not a builder: nothing more can be declared
    elements.build();
    const given = base.map('input-gives-wrong', {
      after: ['render'],
      over: (ctx) => ctx.input.platforms,
      workflow: publishToPlatform,
      input: (element) => ({ platform: element }),
    });
    expectTypeOf(given).toEqualTypeOf(inputMistake);
    base.map('wrong-after', {
      // @ts-expect-error no step "review" was declared before
      after: ['review'],
      over: () => [{ platform: 'bluesky', text: '' }],
      workflow: publishToPlatform,
    });
    base.map(
      // @ts-expect-error render is declared already
      'render',
      { over: () => [{ platform: 'bluesky', text: '' }], workflow: publishToPlatform },
    );
  });

  it('types a one-step child: ctx.input by its inputSchema, unknown without one', () => {
    const image = z.object({ url: z.string(), width: z.number().default(100) });
    workflow({ name: 'resize', input: z.object({ images: z.array(z.string()) }) })
      .map('resize-each', {
        over: (ctx) => ctx.input.images.map((url) => ({ url })),
        inputSchema: image,
        queue: 'cpu',
        maxAttempts: 3,
        run: (ctx) => {
          expectTypeOf(ctx.input).toEqualTypeOf<DeepReadonly<z.output<typeof image>>>();
          return { bytes: ctx.input.url.length * ctx.input.width };
        },
      })
      .map('thumbnail-each', {
        over: (ctx) => ctx.input.images,
        input: (url, index) => ({ url, index }),
        tolerate: { percent: 10 },
        run: (ctx) => {
          // No schema: the child takes any JSON value, so nothing is known of it.
          expectTypeOf(ctx.input).toBeUnknown();
          return 1;
        },
      })
      .step('report', {
        after: ['resize-each', 'thumbnail-each'],
        run: (ctx) => {
          expectTypeOf(ctx.results['resize-each']).toEqualTypeOf<
            readonly { readonly bytes: number }[]
          >();
          expectTypeOf(ctx.results['thumbnail-each']).toEqualTypeOf<
            readonly ChildOutcome<number>[]
          >();
          return null;
        },
      })
      .build();
  });

  it('refuses one-step children given what their inputSchema does not take', () => {
    const image = z.object({ url: z.string(), tags: z.array(z.string()) });
    const base = workflow({ name: 'schema-child', input: z.object({ urls: z.array(z.string()) }) });
    base.map('fits', {
      over: (ctx) => ctx.input.urls,
      inputSchema: image,
      input: (url) => ({ url, tags: ['new'] }),
      run: (ctx) => ctx.input.tags.length,
    });
    const raw = base.map('raw', {
      over: (ctx) => ctx.input.urls,
      inputSchema: image,
      run: () => 1,
    });
    expectTypeOf(raw).toEqualTypeOf(elementsMistake);
    const wrong = base.map('wrong', {
      over: (ctx) => ctx.input.urls,
      inputSchema: image,
      input: (url) => ({ url, tags: 'new' }),
      run: () => 1,
    });
    expectTypeOf(wrong).toEqualTypeOf(inputMistake);
  });
});

describe('map({...}) for defineWorkflow and .add', () => {
  it('types its output by the child definition and the tolerance', () => {
    const strict = map({
      over: () => [{ platform: 'bluesky', text: 'a' }],
      workflow: publishToPlatform,
    });
    expectTypeOf(strict['~output']).toEqualTypeOf<
      { readonly type: readonly Posted[] } | undefined
    >();
    const tolerant = map({
      after: ['render'],
      over: () => [1, 2],
      workflow: publishToPlatform,
      input: (n) => ({ platform: 'mastodon', text: String(n) }),
      tolerate: { percent: 50 },
    });
    expectTypeOf(tolerant['~output']).toEqualTypeOf<
      { readonly type: readonly ChildOutcome<Posted>[] } | undefined
    >();
    const oneStep = map({ over: () => ['a'], inputSchema: z.string(), run: (ctx) => ctx.input });
    expectTypeOf(oneStep['~output']).toEqualTypeOf<
      { readonly type: readonly string[] } | undefined
    >();
    defineWorkflow({
      name: 'publish-declared',
      input: note,
      steps: {
        render: step({ run: () => null }),
        'publish-each': tolerant,
        'count-each': oneStep,
      },
    });
    // An untyped child definition: its result is unknown, and it takes anything.
    const untyped: WorkflowDefinition = publishToPlatform;
    expectTypeOf(map({ over: () => [1], workflow: untyped })['~output']).toEqualTypeOf<
      { readonly type: readonly unknown[] } | undefined
    >();
    const mistaken = map({ over: () => ['mastodon'], workflow: publishToPlatform });
    expectTypeOf(mistaken).toEqualTypeOf(elementsMistake);
    defineWorkflow({
      name: 'publish-mistaken',
      input: note,
      // @ts-expect-error the step is a mistake, not a step definition
      steps: { 'publish-each': mistaken },
    });
  });

  it('checks after and types the output downstream through .add', () => {
    const base = workflow({ name: 'publish-added', input: note }).step('render', {
      run: () => null,
    });
    const publishEach = map({
      after: ['render'],
      over: () => [] as z.input<typeof platform>[],
      workflow: publishToPlatform,
      tolerate: { failures: 0 },
    });
    base.add('publish-each', publishEach).step('report', {
      after: ['publish-each'],
      run: (ctx) => {
        expectTypeOf(ctx.results['publish-each']).toEqualTypeOf<readonly ChildOutcome<Posted>[]>();
        return null;
      },
    });
    // @ts-expect-error its after names no earlier step
    workflow({ name: 'publish-early', input: note }).add('publish-each', publishEach);
  });
});

describe('startChildren and startChild', () => {
  it("check inputs against a definition's schema; a name takes anything", () => {
    step({
      run: (ctx: StepContext) => {
        startChild(publishToPlatform, { platform: 'mastodon', text: 'a' });
        startChildren(publishToPlatform, [{ platform: 'bluesky', text: 'b' }], {
          tolerate: { failures: 1 },
        });
        // @ts-expect-error text is missing
        startChild(publishToPlatform, { platform: 'mastodon' });
        // @ts-expect-error not a platform
        startChildren(publishToPlatform, [{ platform: 'myspace', text: 'c' }]);
        startChildren('publish-to-platform', [1, 'anything']);
        return startChild('publish-to-platform', ctx.input);
      },
    });
  });
});
