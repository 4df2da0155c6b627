import {
  DefinitionError,
  defineWorkflow,
  type StepContext,
  step,
  workflow,
} from '@causeway/workflow';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { definitionError } from './definition-errors';

const input = z.object({ noteId: z.string(), title: z.string() });
type Input = z.output<typeof input>;

// The same functions in both forms, so that the definitions can be compared whole.
const idempotencyKey = (given: Input) => `note:${given.noteId}`;
const render = (ctx: StepContext<Input>) => ({ html: `<h1>${ctx.input.title}</h1>` });
const review = () => ({ approved: true });
const publish = () => 'published';
const archive = () => null;

describe('workflow(...).step(...).build()', () => {
  it('builds the definition defineWorkflow builds for the same steps', () => {
    const built = workflow({ name: 'publish-note', input, idempotencyKey, deadlineMs: 600_000 })
      .step('render', { queue: 'cpu', reentrant: true, timeoutMs: 30_000, run: render })
      .step('review', { after: ['render'], maxAttempts: 3, run: review })
      .step('archive', { after: ['render'], deadlineMs: 60_000, run: archive })
      .step('publish', {
        after: ['review', 'archive'],
        queue: 'network',
        backoff: { initialIntervalMs: 2_000, maximumIntervalMs: 60_000 },
        run: publish,
      })
      .build();
    const declared = defineWorkflow({
      name: 'publish-note',
      input,
      idempotencyKey,
      deadlineMs: 600_000,
      steps: {
        render: step<Input>({ queue: 'cpu', reentrant: true, timeoutMs: 30_000, run: render }),
        review: step<Input>({ after: ['render'], maxAttempts: 3, run: review }),
        archive: step<Input>({ after: ['render'], deadlineMs: 60_000, run: archive }),
        publish: step<Input>({
          after: ['review', 'archive'],
          queue: 'network',
          backoff: { initialIntervalMs: 2_000, maximumIntervalMs: 60_000 },
          run: publish,
        }),
      },
    });
    expect(built).toEqual(declared);
    // Spelled out, so that a failure says what differs.
    const shape = (definition: typeof built) =>
      definition.steps.map((s) => [s.name, s.after, s.downstream, s.queue, s.policy]);
    expect(shape(built)).toEqual(shape(declared));
    expect(built.steps.map((s) => s.name)).toEqual(['render', 'review', 'archive', 'publish']);
    expect(built.steps[0]?.policy).toMatchObject({ reentrant: true, timeoutMs: 30_000 });
    expect(built.steps[0]?.run).toBe(render);
    expect(Object.isFrozen(built)).toBe(true);
    expect(Object.isFrozen(built.steps[3])).toBe(true);
  });

  it('is immutable: two workflows can grow from one builder', () => {
    const base = workflow({ name: 'branching', input }).step('render', { run: render });
    const one = base.step('review', { after: ['render'], run: review }).build();
    const other = base.step('publish', { after: ['render'], run: publish }).build();
    expect(one.steps.map((s) => s.name)).toEqual(['render', 'review']);
    expect(other.steps.map((s) => s.name)).toEqual(['render', 'publish']);
    expect(base.build().steps.map((s) => s.name)).toEqual(['render']);
  });

  it('checks each step as step() does, at once, and the workflow as defineWorkflow does', () => {
    const base = workflow({ name: 'checked', input });
    expect(() => base.step('only', { maxAttempts: 0, run: review })).toThrow(DefinitionError);
    expect(definitionError(() => base.build()).problems).toEqual([
      'a workflow needs at least one step',
    ]);
    const badName = definitionError(() => base.step('Bad', { run: review }).build());
    expect(badName.message).toContain('step name "Bad" must be lowercase letters');
    const badDeadline = workflow({ name: 'checked', input, deadlineMs: 0 }).step('a', {
      run: review,
    });
    expect(definitionError(() => badDeadline.build()).message).toContain('deadlineMs must be');
  });

  it('refuses at run time what its types refuse: a repeated name, an after not declared before', () => {
    const base = workflow({ name: 'untyped', input }).step('render', { run: render });
    // @ts-expect-error render is declared already (JavaScript callers get the DefinitionError)
    const twice = base.step('render', { run: review });
    expect(definitionError(() => twice.build()).problems).toEqual([
      'step "render" is declared twice',
    ]);
    const forward = workflow({ name: 'untyped', input })
      // @ts-expect-error publish is not declared yet
      .step('review', { after: ['publish'], run: review })
      .step('publish', { run: publish });
    const error = definitionError(() => forward.build());
    expect(error.message).toMatch(/^workflow "untyped": /);
    expect(error.problems).toEqual([
      'step "review" runs after "publish", which is declared after it',
    ]);
    // @ts-expect-error no step is named nope
    const unknown = base.step('review', { after: ['nope', 'render', 'render'], run: review });
    expect(definitionError(() => unknown.build()).problems).toEqual([
      'step "review" runs after unknown step "nope"',
      'step "review" lists "render" twice in after',
    ]);
    // Both kinds of problem at once are reported together.
    const both = twice.step('review', {
      // @ts-expect-error no step is named nope
      after: ['nope'],
      run: review,
    });
    expect(definitionError(() => both.build()).problems).toEqual([
      'step "render" is declared twice',
      'step "review" runs after unknown step "nope"',
    ]);
  });
});
