import { type Debounce, workflow } from '@causeway/workflow';
import {
  debounceLimits,
  defineWorkflow,
  getStep,
  step,
  workflowRegistry,
} from '@causeway/workflow/internal';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { definitionError } from './definition-errors';

const input = z.object({ id: z.string() });
const noop = () => ({});

describe('defineWorkflow', () => {
  it('orders steps topologically and records downstream steps', () => {
    const workflow = defineWorkflow({
      name: 'diamond',
      input,
      steps: {
        join: step({ after: ['left', 'right'], run: noop }),
        left: step({ after: ['start'], run: noop }),
        right: step({ after: ['start'], run: noop }),
        start: step({ run: noop }),
      },
    });
    expect(workflow.steps.map((s) => s.name)).toEqual(['start', 'left', 'right', 'join']);
    expect(getStep(workflow, 'start').downstream).toEqual(['left', 'right']);
    expect(Object.isFrozen(workflow)).toBe(true);
    expect(Object.isFrozen(workflow.steps)).toBe(true);
  });

  it('fills the retry policy with defaults and keeps explicit values', () => {
    const workflow = defineWorkflow({
      name: 'policy',
      input,
      steps: {
        only: step({
          maxAttempts: 2,
          backoff: { initialIntervalMs: 10 },
          reentrant: true,
          run: noop,
        }),
      },
    });
    const policy = getStep(workflow, 'only').policy;
    expect(policy.maxAttempts).toBe(2);
    expect(policy.reentrant).toBe(true);
    expect(policy.backoff).toEqual({
      initialIntervalMs: 10,
      backoffCoefficient: 2,
      maximumIntervalMs: 300_000,
    });
    expect(getStep(workflow, 'only').queue).toBe('default');
  });

  it('refuses an unknown `after` step', () => {
    const error = definitionError(() =>
      defineWorkflow({ name: 'w', input, steps: { a: step({ after: ['missing'], run: noop }) } }),
    );
    expect(error.code).toBe('invalid_definition');
    expect(error.message).toContain('step "a" runs after unknown step "missing"');
    // A name every object inherits is no step either.
    const inherited = definitionError(() =>
      defineWorkflow({
        name: 'w',
        input,
        steps: { a: step({ after: ['constructor'], run: noop }) },
      }),
    );
    expect(inherited.message).toContain('step "a" runs after unknown step "constructor"');
  });

  it('refuses a cycle and names it', () => {
    const error = definitionError(() =>
      defineWorkflow({
        name: 'w',
        input,
        steps: {
          a: step({ after: ['c'], run: noop }),
          b: step({ after: ['a'], run: noop }),
          c: step({ after: ['b'], run: noop }),
          d: step({ run: noop }),
        },
      }),
    );
    expect(error.message).toMatch(/cycle: (a → b → c → a|b → c → a → b|c → a → b → c)/);
  });

  it('refuses a step that runs after itself and duplicate `after` entries', () => {
    const error = definitionError(() =>
      defineWorkflow({
        name: 'w',
        input,
        steps: { a: step({ run: noop }), b: step({ after: ['b', 'a', 'a'], run: noop }) },
      }),
    );
    expect(error.problems).toContain('step "b" cannot run after itself');
    expect(error.problems).toContain('step "b" lists "a" twice in after');
  });

  it('refuses two definitions of one name and version in a registry', () => {
    const make = () => defineWorkflow({ name: 'same', input, steps: { a: step({ run: noop }) } });
    expect(() => workflowRegistry([make(), make()])).toThrow(
      /two definitions of workflow "same" have version "[0-9a-f]{12}"/,
    );
    expect(workflowRegistry([make()]).get('same')?.name).toBe('same');
  });

  it('refuses bad names and an empty step list', () => {
    expect(() =>
      defineWorkflow({ name: 'Bad Name', input, steps: { a: step({ run: noop }) } }),
    ).toThrow(/workflow name must be lowercase/);
    expect(() =>
      defineWorkflow({ name: 'w', input, steps: { 'Not OK': step({ run: noop }) } }),
    ).toThrow(/step name "Not OK"/);
    expect(() => defineWorkflow({ name: 'w', input, steps: {} })).toThrow(/at least one step/);
  });

  it.each([
    [{ maxAttempts: 0 }, /maxAttempts must be an integer from 1/],
    [{ maxAttempts: 2.5 }, /maxAttempts must be an integer/],
    [{ timeoutMs: -1 }, /timeoutMs must be an integer/],
    [{ backoff: { initialIntervalMs: 5_000, maximumIntervalMs: 1_000 } }, /must not be below/],
    [{ backoff: { backoffCoefficient: 0.5 } }, /backoffCoefficient must be a number from 1/],
    [{ backoff: { initialIntervalMs: Number.NaN } }, /initialIntervalMs must be an integer/],
    [{ deadlineMs: 0 }, /deadlineMs must be an integer/],
    [{ queue: 'CPU!' }, /queue must be lowercase/],
  ])('refuses bad retry numbers %j', (options, message) => {
    expect(() => step({ ...options, run: noop })).toThrow(message);
  });

  it('refuses a bad workflow deadline', () => {
    expect(() =>
      defineWorkflow({ name: 'w', input, deadlineMs: -5, steps: { a: step({ run: noop }) } }),
    ).toThrow(/deadlineMs must be an integer/);
  });

  it('types ctx.input with the input type given to step', () => {
    const workflow = defineWorkflow({
      name: 'typed',
      input,
      steps: {
        a: step<z.output<typeof input>>({
          run: (ctx) => {
            const id: string = ctx.input.id;
            return { id };
          },
        }),
      },
    });
    expect(workflow.steps).toHaveLength(1);
  });
});

describe('debounce (R52)', () => {
  const steps = { only: step({ run: noop }) };
  const key = (value: { id: string }) => value.id;

  it('keeps a valid debounce on the definition, from defineWorkflow and from the builder', () => {
    const defined = defineWorkflow({
      name: 'debounced',
      input,
      debounce: { key, quietMs: 500, maxWaitMs: 5_000 },
      steps,
    });
    expect(defined.debounce).toMatchObject({ quietMs: 500, maxWaitMs: 5_000 });
    expect(defined.debounce?.key({ id: 'note-1' })).toBe('note-1');
    const built = workflow({ name: 'debounced', input, debounce: { key, quietMs: 500 } })
      .step('only', { run: noop })
      .build();
    expect(built.debounce).toMatchObject({ quietMs: 500 });
    expect(built.debounce?.maxWaitMs).toBeUndefined();
    expect(defineWorkflow({ name: 'plain', input, steps }).debounce).toBeNull();
  });

  it.each([
    [{ key, quietMs: 0 }, 'debounce.quietMs must be an integer from 1'],
    [{ key, quietMs: 1.5 }, 'debounce.quietMs must be an integer from 1'],
    [{ key, quietMs: debounceLimits.maxMs + 1 }, 'debounce.quietMs must be an integer from 1'],
    [{ key, quietMs: 100, maxWaitMs: -1 }, 'debounce.maxWaitMs must be an integer from 1'],
    [{ key, quietMs: 100, maxWaitMs: 99 }, 'debounce.maxWaitMs (99) must be at least'],
    [{ key: 'id', quietMs: 100 }, 'debounce.key must be a function'],
  ])('refuses %o at definition load with invalid_definition', (debounce, problem) => {
    const error = definitionError(() =>
      defineWorkflow({
        name: 'debounced',
        input,
        debounce: debounce as unknown as Debounce<{ id: string }>,
        steps,
      }),
    );
    expect(error.code).toBe('invalid_definition');
    expect(error.problems.join('\n')).toContain(problem);
  });
});
