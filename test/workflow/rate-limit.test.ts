/**
 * Rate limits (R51), the pure part: declaring one on the engine, a step's use of one, the
 * spend derived at admission, and the engine's check of its limits against its workflows.
 * No database: the claims that spend a limit are the engine's (test/engine).
 */
import { rateLimit, type StepRateLimit, workflow } from '@causeway/workflow';
import {
  checkAdmission,
  defineWorkflow,
  rateLimitDeclarationProblems,
  rateLimitLimits,
  rateOf,
  step,
} from '@causeway/workflow/internal';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { definitionError } from './definition-errors';

const noop = () => ({});
const tenantInput = z.object({ tenant: z.string() });
type Tenant = z.output<typeof tenantInput>;

/** `rateLimit` as plain JavaScript may call it, with anything. */
const rateLimitUnchecked = (options: unknown) => rateLimit(options as never);
const stepWithRateLimit = (option: unknown) => step({ rateLimit: option as never, run: noop });
const context = { input: { tenant: 'acme' }, workflowName: 'publish', step: 'post' };

describe('rateLimit: a limit declared on the engine (R51)', () => {
  it('keeps a valid declaration, frozen, with nothing else', () => {
    const given = { name: 'mail-api', limit: 100, periodMs: 60_000, extra: true };
    const declared = rateLimit(given);
    expect(declared).toEqual({ name: 'mail-api', limit: 100, periodMs: 60_000 });
    expect(Object.isFrozen(declared)).toBe(true);
    expect(declared).not.toBe(given);
    expect(rateLimit({ name: 'x', limit: 1, periodMs: 1 })).toEqual({
      name: 'x',
      limit: 1,
      periodMs: 1,
    });
    expect(rateLimit({ name: 'a'.repeat(200), limit: 1_000_000, periodMs: 86_400_000 })).toEqual({
      name: 'a'.repeat(200),
      limit: 1_000_000,
      periodMs: 86_400_000,
    });
  });

  it('refuses each bad field with invalid_definition, naming the field and the value', () => {
    const cases: [unknown, string][] = [
      [{ name: '', limit: 1, periodMs: 1 }, 'name is empty'],
      [{ name: 7, limit: 1, periodMs: 1 }, 'name must be a string'],
      [
        { name: 'a'.repeat(201), limit: 1, periodMs: 1 },
        'name is 201 characters, over the limit of 200',
      ],
      [{ name: 'a\u0000b', limit: 1, periodMs: 1 }, 'name has a NUL character (\\u0000)'],
      [{ name: 'api', limit: 0, periodMs: 1 }, 'limit must be an integer from 1 to 1000000, got 0'],
      [
        { name: 'api', limit: 1_000_001, periodMs: 1 },
        'limit must be an integer from 1 to 1000000, got 1000001',
      ],
      [
        { name: 'api', limit: 2.5, periodMs: 1 },
        'limit must be an integer from 1 to 1000000, got 2.5',
      ],
      [
        { name: 'api', limit: '5', periodMs: 1 },
        'limit must be an integer from 1 to 1000000, got 5',
      ],
      [
        { name: 'api', limit: 1, periodMs: 0 },
        'periodMs must be an integer from 1 to 86400000, got 0',
      ],
      [
        { name: 'api', limit: 1, periodMs: 86_400_001 },
        'periodMs must be an integer from 1 to 86400000, got 86400001',
      ],
      [
        { name: 'api', limit: 1, periodMs: Number.NaN },
        'periodMs must be an integer from 1 to 86400000, got NaN',
      ],
      [{ name: 'api', limit: 1 }, 'periodMs must be an integer from 1 to 86400000, got undefined'],
    ];
    for (const [options, problem] of cases) {
      const error = definitionError(() => rateLimitUnchecked(options));
      expect(error.code).toBe('invalid_definition');
      expect(error.problems).toEqual([problem]);
      expect(error.message).toBe(`invalid rate limit: ${problem}`);
    }
  });

  it('lists every bad field at once, and refuses what is not an object', () => {
    expect(definitionError(() => rateLimitUnchecked({ limit: -1 })).problems).toEqual([
      'name must be a string',
      'limit must be an integer from 1 to 1000000, got -1',
      'periodMs must be an integer from 1 to 86400000, got undefined',
    ]);
    expect(definitionError(() => rateLimitUnchecked(null)).problems).toEqual([
      'a rate limit must be an object { name, limit, periodMs }',
    ]);
  });

  it('round-trips any valid declaration (property)', () => {
    const declaration = fc.record({
      name: fc.string({ minLength: 1, maxLength: rateLimitLimits.maxNameLength }),
      limit: fc.integer(rateLimitLimits.limit),
      periodMs: fc.integer(rateLimitLimits.periodMs),
    });
    fc.assert(
      fc.property(declaration, (options) => {
        expect(rateLimit(options)).toEqual(options);
      }),
    );
  });
});

describe("step({ rateLimit }): a step's use of a declared limit", () => {
  it('stores a frozen copy, on builder steps too', () => {
    const option: StepRateLimit<Tenant> = { name: 'mail-api', key: (ctx) => ctx.input.tenant };
    const declared = step<Tenant>({ rateLimit: option, run: noop });
    expect(declared.rateLimit).toEqual(option);
    expect(declared.rateLimit).not.toBe(option);
    expect(Object.isFrozen(declared.rateLimit)).toBe(true);
    expect(step({ run: noop }).rateLimit).toBeUndefined();
    expect('rateLimit' in step({ run: noop })).toBe(false);

    const built = workflow({ name: 'mail', input: tenantInput })
      .step('send', {
        rateLimit: { name: 'mail-api', key: (ctx) => ctx.input.tenant.toUpperCase(), cost: 2 },
        run: noop,
      })
      .build();
    const sent = built.steps[0]?.rateLimit;
    expect(sent).toMatchObject({ name: 'mail-api', cost: 2 });
    expect(Object.isFrozen(sent)).toBe(true);
    expect(sent?.key?.({ ...context, input: { tenant: 'acme' } })).toBe('ACME');
  });

  it('refuses a bad name, key or cost with invalid_definition, every problem listed', () => {
    const cases: [unknown, string[]][] = [
      [null, ['rateLimit must be an object { name, key?, cost? }']],
      ['mail-api', ['rateLimit must be an object { name, key?, cost? }']],
      [{}, ['rateLimit.name must be a string']],
      [{ name: '' }, ['rateLimit.name is empty']],
      [{ name: 'n'.repeat(201) }, ['rateLimit.name is 201 characters, over the limit of 200']],
      [{ name: 'api', key: 'tenant' }, ['rateLimit.key must be a function']],
      [{ name: 'api', cost: 0 }, ['rateLimit.cost must be an integer from 1 to 1000000, got 0']],
      [
        { name: 'api', cost: 1.5 },
        ['rateLimit.cost must be an integer from 1 to 1000000, got 1.5'],
      ],
      [
        { name: 'api', cost: 1_000_001 },
        ['rateLimit.cost must be an integer from 1 to 1000000, got 1000001'],
      ],
      [
        { name: '\ud800', key: 1, cost: '2' },
        [
          'rateLimit.name has a lone UTF-16 surrogate',
          'rateLimit.key must be a function',
          'rateLimit.cost must be an integer from 1 to 1000000, got 2',
        ],
      ],
    ];
    for (const [option, problems] of cases) {
      const error = definitionError(() => stepWithRateLimit(option));
      expect(error.code).toBe('invalid_definition');
      expect(error.problems).toEqual(problems);
    }
    expect(() =>
      workflow({ name: 'mail', input: tenantInput })
        .step('send', { rateLimit: { name: 'api', cost: 0 }, run: noop })
        .build(),
    ).toThrow('rateLimit.cost must be an integer from 1 to 1000000, got 0');
  });
});

describe("rateOf: a task's spend, derived at admission", () => {
  it('derives the key from the input, workflow and step; cost 1 unless given', () => {
    const keyed: StepRateLimit = {
      name: 'mail-api',
      key: (ctx) => `${ctx.workflowName}/${ctx.step}/${(ctx.input as Tenant).tenant}`,
    };
    expect(rateOf(keyed, context)).toEqual({
      ok: true,
      rate: { name: 'mail-api', key: 'publish/post/acme', cost: 1 },
    });
    expect(rateOf({ ...keyed, cost: 7 }, context)).toEqual({
      ok: true,
      rate: { name: 'mail-api', key: 'publish/post/acme', cost: 7 },
    });
  });

  it('gives the null key, the name’s one bucket, without a key function', () => {
    expect(rateOf({ name: 'mail-api', cost: 3 }, context)).toEqual({
      ok: true,
      rate: { name: 'mail-api', key: null, cost: 3 },
    });
  });

  it('refuses a key function that throws or gives no storable key of 1 to 200 characters', () => {
    const cases: [() => unknown, string][] = [
      [
        () => {
          throw new Error('no tenant');
        },
        'the rate limit key function of step "post" threw: Error: no tenant',
      ],
      [() => '', 'the rate limit key of step "post" is empty'],
      [
        () => 'k'.repeat(201),
        'the rate limit key of step "post" is 201 characters, over the limit of 200',
      ],
      [() => 42, 'the rate limit key of step "post" must be a string'],
      [() => undefined, 'the rate limit key of step "post" must be a string'],
      [() => 'a\u0000', 'the rate limit key of step "post" has a NUL character (\\u0000)'],
    ];
    for (const [key, problem] of cases) {
      expect(rateOf({ name: 'mail-api', key: key as () => string }, context)).toEqual({
        ok: false,
        problem,
      });
    }
  });

  it('accepts any key of 1 to 200 ordinary characters, as given (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: rateLimitLimits.maxKeyLength }),
        fc.integer(rateLimitLimits.cost),
        (key, cost) => {
          expect(rateOf({ name: 'api', key: () => key, cost }, context)).toEqual({
            ok: true,
            rate: { name: 'api', key, cost },
          });
        },
      ),
    );
  });
});

describe("rateLimitDeclarationProblems: an engine's limits against its workflows", () => {
  const mailApi = rateLimit({ name: 'mail-api', limit: 5, periodMs: 1_000 });
  const mailer = defineWorkflow({
    name: 'mailer',
    input: tenantInput,
    steps: {
      send: step<Tenant>({
        rateLimit: { name: 'mail-api', key: (ctx) => ctx.input.tenant, cost: 5 },
        run: noop,
      }),
      log: step({ after: ['send'], run: noop }),
    },
  });

  it('finds nothing when every name is declared once and every cost fits', () => {
    expect(rateLimitDeclarationProblems([mailApi], [mailer])).toEqual([]);
    expect(rateLimitDeclarationProblems([], [])).toEqual([]);
    expect(rateLimitDeclarationProblems([mailApi], [])).toEqual([]);
  });

  it('finds a name declared twice', () => {
    expect(
      rateLimitDeclarationProblems(
        [mailApi, rateLimit({ name: 'mail-api', limit: 9, periodMs: 10 }), mailApi],
        [mailer],
      ),
    ).toEqual(['two rate limits are named "mail-api"']);
  });

  it('finds a limit whose own fields are wrong, made without rateLimit()', () => {
    expect(
      rateLimitDeclarationProblems(
        [{ name: 'mail-api', limit: 0, periodMs: 1_000 }, null as never, { limit: 1 } as never],
        [],
      ),
    ).toEqual([
      'rate limit "mail-api": limit must be an integer from 1 to 1000000, got 0',
      'rate limit #1: a rate limit must be an object { name, limit, periodMs }',
      'rate limit #2: name must be a string',
      'rate limit #2: periodMs must be an integer from 1 to 86400000, got undefined',
    ]);
  });

  it('finds a step naming an undeclared limit, in a map step’s child workflow too', () => {
    const grandchild = workflow({ name: 'sms', input: tenantInput })
      .step('text', { rateLimit: { name: 'sms-api' }, run: noop })
      .build();
    const child = workflow({ name: 'notify', input: tenantInput })
      .map('each-number', { over: () => [{ tenant: 'a' }], workflow: grandchild })
      .step('push', { rateLimit: { name: 'push-api', cost: 1 }, run: noop })
      .build();
    const parent = workflow({ name: 'campaign', input: tenantInput })
      .map('each-tenant', { over: () => [{ tenant: 'a' }], workflow: child })
      .map('resend', { over: () => [{ tenant: 'b' }], workflow: child })
      .build();
    // The child is also registered itself: each problem is told once.
    expect(rateLimitDeclarationProblems([mailApi], [parent, child, mailer])).toEqual([
      'workflow "notify" step "push" (child of map step "each-tenant" of workflow "campaign") names rate limit "push-api", which is not declared',
      'workflow "sms" step "text" (child of map step "each-number" of workflow "notify") names rate limit "sms-api", which is not declared',
    ]);
    expect(rateLimitDeclarationProblems([], [mailer])).toEqual([
      'workflow "mailer" step "send" names rate limit "mail-api", which is not declared',
    ]);
  });

  it('finds a step whose cost exceeds its limit: its tasks could never be claimed', () => {
    const small = rateLimit({ name: 'mail-api', limit: 4, periodMs: 1_000 });
    expect(rateLimitDeclarationProblems([small], [mailer])).toEqual([
      'workflow "mailer" step "send" costs 5 of rate limit "mail-api", over its limit of 4: its tasks could never be claimed',
    ]);
  });

  it('accepts the same limit named by many steps and workflows, keyed or not', () => {
    const other = workflow({ name: 'digest', input: tenantInput })
      .step('send', { rateLimit: { name: 'mail-api' }, run: noop })
      .step('again', { after: ['send'], rateLimit: { name: 'mail-api', cost: 5 }, run: noop })
      .build();
    expect(rateLimitDeclarationProblems([mailApi], [mailer, other])).toEqual([]);
  });
});

describe('checkAdmission: each step’s spend, fixed at admission (R51, R58)', () => {
  const keyed = workflow({ name: 'mail', input: tenantInput })
    .step('render', { run: noop })
    .step('send', {
      after: ['render'],
      rateLimit: { name: 'mail-api', key: (ctx) => `${ctx.workflowName}:${ctx.input.tenant}` },
      run: noop,
    })
    .step('archive', { after: ['send'], rateLimit: { name: 'storage', cost: 3 }, run: noop })
    .build();

  it('returns the spend of every step in definition order, null for a step without a limit', () => {
    const admitted = checkAdmission(keyed, { tenant: 'acme' }, undefined);
    expect(admitted).toMatchObject({
      ok: true,
      concurrency: [null, null, null],
      rate: [
        null,
        { name: 'mail-api', key: 'mail:acme', cost: 1 },
        { name: 'storage', key: null, cost: 3 },
      ],
    });
  });

  it('refuses invalid_rate_limit_key when a key function throws or gives no storable key', () => {
    const refusing = (key: (ctx: { input: Tenant }) => unknown) =>
      defineWorkflow({
        name: 'mail',
        input: tenantInput,
        steps: {
          send: step<Tenant>({ rateLimit: { name: 'mail-api', key: key as never }, run: noop }),
        },
      });
    const cases: [(ctx: { input: Tenant }) => unknown, string][] = [
      [(ctx) => ctx.input.tenant, 'the rate limit key of step "send" is empty'],
      [
        () => {
          throw new RangeError('no tenant');
        },
        'the rate limit key function of step "send" threw: RangeError: no tenant',
      ],
      [
        () => 'k'.repeat(201),
        'the rate limit key of step "send" is 201 characters, over the limit of 200',
      ],
      [() => null, 'the rate limit key of step "send" must be a string'],
    ];
    for (const [key, message] of cases) {
      expect(checkAdmission(refusing(key), { tenant: '' }, undefined)).toEqual({
        ok: false,
        error: { code: 'invalid_rate_limit_key', message },
      });
    }
  });
});
