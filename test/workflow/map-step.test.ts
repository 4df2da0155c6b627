/**
 * Map steps as definitions (R44, R45): what `map({...})` and `.map(...)` declare for the engine
 * to read, the one-step child that `run` gives and the name `defineWorkflow` gives it, how a
 * definition describes a map, and every mistake refused at definition time with what is wrong.
 * Pure: no database.
 */
import {
  DefinitionError,
  defaultRetryPolicy,
  defineWorkflow,
  describeWorkflow,
  getStep,
  map,
  StepError,
  step,
  withMapChildren,
  workflow,
  workflowMermaid,
} from '@causeway/workflow/internal';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

const platform = z.object({ platform: z.string(), text: z.string() });
const publishToPlatform = workflow({ name: 'publish-to-platform', input: platform })
  .step('post', { run: () => ({ url: 'https://example.test/1' }) })
  .build();
const note = z.object({ platforms: z.array(z.string()) });
const over = () => [];

/** `map` with options the compiler would refuse, as JavaScript or a cast could give them. */
const mapUnchecked = (options: Record<string, unknown>) => map(options as never);

function problemsOf(define: () => unknown): readonly string[] {
  try {
    define();
  } catch (error) {
    if (error instanceof DefinitionError) {
      expect(error.code).toBe('invalid_definition');
      expect(error.message).toBe(`invalid map step: ${error.problems.join('; ')}`);
      return error.problems;
    }
    throw error;
  }
  throw new Error('expected a DefinitionError');
}

describe('map({...})', () => {
  it('declares a step that runs no code and maps over a child workflow', () => {
    const list = (context: { readonly input: unknown }) => [context.input];
    const input = (element: unknown, index: number) => ({
      platform: String(element),
      text: `${index}`,
    });
    const declared = map({
      after: ['render'],
      over: list,
      workflow: publishToPlatform,
      input,
      tolerate: { failures: 2, percent: 10 },
      maxChildren: 500,
      concurrency: 4,
    });
    expect(declared.after).toEqual(['render']);
    expect(declared.queue).toBe('default');
    expect(declared.policy).toEqual({ ...defaultRetryPolicy, maxAttempts: 1, map: true });
    expect(declared.event).toBeUndefined();
    expect(declared.map).toEqual({
      over: list,
      workflow: publishToPlatform,
      input,
      tolerate: { failures: 2, percent: 10 },
      maxChildren: 500,
      concurrency: 4,
    });
    expect(declared.map?.workflow).toBe(publishToPlatform);
    expect(Object.isFrozen(declared)).toBe(true);
    expect(Object.isFrozen(declared.map)).toBe(true);
    expect(Object.isFrozen(declared.map?.tolerate)).toBe(true);
    expect(() => declared.run({} as never)).toThrow(StepError);
    expect(() => declared.run({} as never)).toThrow(
      expect.objectContaining({ category: 'invalid_argument' }),
    );
  });

  it('takes the elements as inputs, fails fast and allows 10,000 children unless told', () => {
    const declared = map({ over, workflow: publishToPlatform });
    expect(declared.after).toEqual([]);
    expect(declared.map).toMatchObject({ input: null, tolerate: null, maxChildren: 10_000 });
  });

  it('is what the builder declares for .map, and what .add takes', () => {
    const options = { over, workflow: publishToPlatform, tolerate: { failures: 1 } } as const;
    const built = workflow({ name: 'publish-note', input: note })
      .map('publish-each', options)
      .build();
    const added = workflow({ name: 'publish-note', input: note })
      .add('publish-each', map(options))
      .build();
    const declared = defineWorkflow({
      name: 'publish-note',
      input: note,
      steps: { 'publish-each': map(options) },
    });
    // Each map step throws from its own `run`: the rest is the same data.
    const shape = (definition: typeof declared) => ({
      ...definition,
      steps: definition.steps.map(({ run, ...rest }) => rest),
    });
    expect(shape(built)).toEqual(shape(declared));
    expect(shape(added)).toEqual(shape(declared));
    expect(getStep(built, 'publish-each').map?.workflow).toBe(publishToPlatform);
  });
});

describe('a one-step child (map({ run }))', () => {
  const resize = (context: { readonly input: unknown }) => ({ resized: context.input });

  it('is a workflow named <parent>/<step> whose one step, named like the map step, runs run', () => {
    const definition = workflow({
      name: 'upload',
      input: z.object({ images: z.array(z.string()) }),
    })
      .step('scan', { run: () => null })
      .map('resize-each', {
        after: ['scan'],
        over: (context) => context.input.images,
        queue: 'cpu',
        maxAttempts: 3,
        timeoutMs: 20_000,
        reentrant: true,
        backoff: { initialIntervalMs: 50 },
        run: resize,
      })
      .build();
    const child = getStep(definition, 'resize-each').map?.workflow;
    expect(child?.name).toBe('upload/resize-each');
    expect(child?.idempotencyKey).toBeNull();
    expect(child?.deadlineMs).toBeNull();
    expect(child?.steps).toHaveLength(1);
    const [only] = child?.steps ?? [];
    expect(only).toMatchObject({
      name: 'resize-each',
      after: [],
      downstream: [],
      queue: 'cpu',
      run: resize,
      policy: {
        ...defaultRetryPolicy,
        maxAttempts: 3,
        timeoutMs: 20_000,
        reentrant: true,
        backoff: { ...defaultRetryPolicy.backoff, initialIntervalMs: 50 },
      },
    });
    expect(only?.map).toBeUndefined();
    expect(Object.isFrozen(child)).toBe(true);
    expect(Object.isFrozen(only)).toBe(true);
  });

  it('takes any JSON value without inputSchema, and what inputSchema accepts with one', () => {
    const free = defineWorkflow({
      name: 'free',
      input: note,
      steps: { each: map({ over, run: resize }) },
    });
    const freeChild = getStep(free, 'each').map?.workflow;
    for (const value of [1, 'a', null, { deep: [true] }]) {
      expect(freeChild?.input.safeParse(value)).toMatchObject({ success: true, data: value });
    }
    const image = z.object({ url: z.string() });
    const typed = defineWorkflow({
      name: 'typed',
      input: note,
      steps: {
        each: map({ over: () => [{ url: 'a' }], inputSchema: image, run: resize }),
      },
    });
    expect(getStep(typed, 'each').map?.workflow.input).toBe(image);
  });

  it('gets a name from each parent that holds it', () => {
    const each = map({ over, run: resize });
    const one = defineWorkflow({ name: 'one', input: note, steps: { each } });
    const two = defineWorkflow({ name: 'two', input: note, steps: { fan: each } });
    expect(getStep(one, 'each').map?.workflow.name).toBe('one/each');
    expect(getStep(two, 'fan').map?.workflow.name).toBe('two/fan');
    expect(getStep(two, 'fan').map?.workflow.steps[0]?.name).toBe('fan');
  });

  it('is the only workflow whose name has a "/": a name a user gives cannot', () => {
    expect(() =>
      defineWorkflow({ name: 'one/each', input: note, steps: { only: step({ run: over }) } }),
    ).toThrow(
      expect.objectContaining({
        problems: [
          'workflow name must be lowercase letters, digits, "_" or "-", start with a letter, and be at most 100 characters (got "one/each")',
        ],
      }),
    );
  });

  it('is listed with every child a worker must know, each once (withMapChildren)', () => {
    const parent = defineWorkflow({
      name: 'parent',
      input: note,
      steps: {
        publish: map({ over, workflow: publishToPlatform }),
        again: map({ over, workflow: publishToPlatform }),
        count: map({ over, run: resize }),
      },
    });
    const grandparent = defineWorkflow({
      name: 'grandparent',
      input: note,
      steps: { parents: map({ over, workflow: parent }) },
    });
    const names = withMapChildren([grandparent, publishToPlatform]).map((d) => d.name);
    expect(names).toEqual(['grandparent', 'parent', 'publish-to-platform', 'parent/count']);
  });
});

describe('mistakes refused at definition time, every one listed', () => {
  it('refuses a concurrency that is not an integer from 1 to 10,000 (R44, R50)', () => {
    for (const concurrency of [0, 2.5, 10_001, '3']) {
      expect(
        problemsOf(() => mapUnchecked({ over, workflow: publishToPlatform, concurrency })),
      ).toEqual([`concurrency must be an integer from 1 to 10000, got ${String(concurrency)}`]);
    }
    expect(map({ over, workflow: publishToPlatform, concurrency: 3 }).map?.concurrency).toBe(3);
    expect(map({ over, workflow: publishToPlatform }).map?.concurrency).toBeNull();
  });

  it('refuses concurrency over children whose steps have keys of their own', () => {
    const keyedChild = workflow({ name: 'keyed-child', input: platform })
      .step('post', {
        concurrency: { key: (ctx) => ctx.input.platform, limit: 1 },
        run: () => null,
      })
      .build();
    expect(problemsOf(() => mapUnchecked({ over, workflow: keyedChild, concurrency: 3 }))).toEqual([
      "concurrency: the child workflow's steps have concurrency keys of their own; a task holds one key",
    ]);
  });

  it('refuses both workflow and run, or neither', () => {
    expect(
      problemsOf(() => mapUnchecked({ over, workflow: publishToPlatform, run: over })),
    ).toEqual(['give workflow or run, not both']);
    expect(problemsOf(() => mapUnchecked({ over }))).toEqual([
      'give workflow (a child definition) or run (a one-step child)',
    ]);
  });

  it('refuses a list, an input, a workflow or an inputSchema of the wrong kind', () => {
    expect(
      problemsOf(() => mapUnchecked({ over: [1, 2], workflow: 'publish-to-platform' })),
    ).toEqual([
      'over must be a function of { workflowId, input, results } giving the list',
      'workflow must be a definition (defineWorkflow or workflow(...).build())',
    ]);
    expect(
      problemsOf(() =>
        mapUnchecked({ over, input: 'text', run: over, inputSchema: {}, timeoutMs: 0 }),
      ),
    ).toEqual([
      "input must be a function (element, index, ctx) giving the child's input",
      'inputSchema must be a zod schema',
      'one-step child: timeoutMs must be an integer from 1 to 604800000, got 0',
    ]);
    expect(problemsOf(() => mapUnchecked(null as never))).toEqual(['options must be an object']);
  });

  it('takes a null tolerance as none: the step fails fast', () => {
    const declared = mapUnchecked({ over, workflow: publishToPlatform, tolerate: null });
    expect(declared.map?.tolerate).toBeNull();
  });

  it('refuses a bad tolerance and a bad maxChildren, and unknown options', () => {
    expect(
      problemsOf(() =>
        mapUnchecked({
          over,
          workflow: publishToPlatform,
          tolerate: { failures: -1 },
          maxChildren: 100_001,
          retries: 3,
          name: 'x',
        }),
      ),
    ).toEqual([
      'unknown options: retries, name',
      'tolerate.failures must be a non-negative integer, got -1',
      'maxChildren must be an integer from 1 to 100000, got 100001',
    ]);
    expect(
      problemsOf(() => mapUnchecked({ over, workflow: publishToPlatform, tolerate: {} })),
    ).toEqual(['tolerate needs failures or percent']);
    expect(
      problemsOf(() =>
        mapUnchecked({ over, workflow: publishToPlatform, tolerate: { percent: 101 } }),
      ),
    ).toEqual(['tolerate.percent must be a number from 0 to 100, got 101']);
    expect(
      problemsOf(() => mapUnchecked({ over, workflow: publishToPlatform, maxChildren: 0 })),
    ).toEqual(['maxChildren must be an integer from 1 to 100000, got 0']);
  });

  it("refuses a one-step child's options beside a workflow, and a bad one-step child", () => {
    expect(
      problemsOf(() =>
        mapUnchecked({ over, workflow: publishToPlatform, queue: 'cpu', inputSchema: note }),
      ),
    ).toEqual([
      'inputSchema, queue: options of a one-step child (run); a child workflow has its own',
    ]);
    expect(
      problemsOf(() => mapUnchecked({ over, run: 'resize', maxAttempts: 0, queue: 'CPU' })),
    ).toEqual([
      'one-step child: maxAttempts must be an integer from 1 to 1000, got 0',
      'one-step child: queue must be lowercase letters, digits, "_" or "-", start with a letter, and be at most 63 characters (got "CPU")',
      'one-step child: run must be a function',
    ]);
  });

  it('refuses in the builder the same way, at the .map call', () => {
    const builder = workflow({ name: 'publish-note', input: note });
    expect(
      problemsOf(() =>
        builder.map('publish-each', { over, workflow: publishToPlatform, concurrency: 0 }),
      ),
    ).toEqual(['concurrency must be an integer from 1 to 10000, got 0']);
  });
});

describe('describing a map step', () => {
  const definition = workflow({ name: 'publish-note', input: note })
    .step('render', { run: () => ({ text: 'hi' }) })
    .map('publish-each', {
      after: ['render'],
      over: (context) => context.input.platforms.map((name) => ({ platform: name, text: '' })),
      workflow: publishToPlatform,
      tolerate: { failures: 1, percent: 20 },
    })
    .map('count-each', { over: () => ['a'], queue: 'cpu', run: () => 1 })
    .build();

  it('shows it as a map over its child workflow in the outline', () => {
    const lines = describeWorkflow(definition).split('\n');
    expect(lines[2]).toBe(
      '  publish-each ⇉ publish-to-platform after render; one child workflow per element, tolerates 1 and 20% failed, at most 10000 children',
    );
    expect(lines[3]).toBe(
      '  count-each ⇉ publish-note/count-each runs first; one child workflow per element, fail fast, at most 10000 children, each child one step: queue cpu, not reentrant, 5 attempts, backoff 1s ×2 ≤ 5m (full jitter), timeout 5m',
    );
  });

  it('draws it as a subroutine labelled with its child workflow', () => {
    expect(workflowMermaid(definition)).toBe(
      [
        'flowchart LR',
        '  render',
        '  publish-each[["publish-each ⇉ publish-to-platform"]]',
        '  render --> publish-each',
        '  count-each[["count-each ⇉ publish-note/count-each"]]',
      ].join('\n'),
    );
  });
});
