import { checkAdmission, defineWorkflow, step } from '@causeway/workflow/internal';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

const workflow = defineWorkflow({
  name: 'note',
  input: z.object({
    noteId: z.string(),
    version: z.number().int(),
    tags: z.array(z.string()).optional(),
  }),
  idempotencyKey: (input) => `note:${input.noteId}:v${input.version}`,
  steps: { only: step({ run: () => ({}) }) },
});

describe('checkAdmission (R30, R34)', () => {
  it('accepts a valid input, stores the parsed value and derives the key', () => {
    expect(
      checkAdmission(workflow, { noteId: 'n1', version: 3, extra: 'dropped' }, undefined),
    ).toEqual({
      ok: true,
      input: { noteId: 'n1', version: 3 },
      inputJson: '{"noteId":"n1","version":3}',
      idempotencyKey: 'note:n1:v3',
      debounceKey: null,
      concurrency: [null],
      rate: [null],
    });
  });

  it('derives each keyed step’s slot from the input, its group by default the step’s (R50)', () => {
    const keyed = defineWorkflow({
      name: 'keyed-note',
      input: z.object({ tenant: z.string() }),
      steps: {
        render: step<{ tenant: string }>({
          concurrency: {
            key: (ctx) => `${ctx.workflowName}:${ctx.step}:${ctx.input.tenant}`,
            limit: 3,
          },
          run: () => ({}),
        }),
        publish: step<{ tenant: string }>({
          after: ['render'],
          concurrency: { key: (ctx) => ctx.input.tenant, limit: 1, group: 'platform' },
          run: () => ({}),
        }),
        notify: step({ after: ['publish'], run: () => ({}) }),
      },
    });
    expect(checkAdmission(keyed, { tenant: 'acme' }, undefined)).toMatchObject({
      ok: true,
      concurrency: [
        { group: 'keyed-note/render', key: 'keyed-note:render:acme', limit: 3 },
        { group: 'platform', key: 'acme', limit: 1 },
        null,
      ],
    });
    const refused = checkAdmission(keyed, { tenant: '' }, undefined);
    expect(refused).toMatchObject({ ok: false, error: { code: 'invalid_concurrency_key' } });
    expect(refused.ok ? '' : refused.error.message).toBe(
      'the concurrency key of step "publish" is empty',
    );
  });

  it("prefers the caller's key", () => {
    expect(checkAdmission(workflow, { noteId: 'n1', version: 3 }, 'mine')).toMatchObject({
      ok: true,
      idempotencyKey: 'mine',
    });
  });

  it.each([
    [{ noteId: 'n', version: 1.5 }, undefined, 'invalid_input'],
    [{ noteId: 'a\u0000b', version: 1 }, undefined, 'unstorable_string'],
    [{ noteId: 'n', version: 1, tags: ['ok', '\ud800'] }, undefined, 'unstorable_string'],
    [{ noteId: 'x'.repeat(300 * 1024), version: 1 }, undefined, 'input_too_large'],
    [{ noteId: 'n', version: 1 }, '', 'invalid_idempotency_key'],
    [{ noteId: 'n', version: 1 }, 'k'.repeat(513), 'invalid_idempotency_key'],
    [{ noteId: 'n', version: 1 }, 'nul\u0000', 'invalid_idempotency_key'],
  ])('refuses %# with %s', (input, key, code) => {
    const admission = checkAdmission(workflow, input, key);
    expect(admission.ok).toBe(false);
    if (!admission.ok) expect(admission.error.code).toBe(code);
  });

  it('points at the failing path', () => {
    const admission = checkAdmission(
      workflow,
      { noteId: 'n', version: 1, tags: ['ok', '\ud800'] },
      undefined,
    );
    expect(admission).toMatchObject({ ok: false, error: { path: ['tags', 1] } });
  });
});

describe('checkAdmission: the debounce key (R52, R58)', () => {
  const debounced = (key: (input: { noteId: string }) => string) =>
    defineWorkflow({
      name: 'debounced-note',
      input: z.object({ noteId: z.string() }),
      debounce: { key, quietMs: 100 },
      steps: { only: step({ run: () => ({}) }) },
    });

  it('derives the key from the parsed input', () => {
    expect(
      checkAdmission(
        debounced((input) => `note:${input.noteId}`),
        { noteId: 'n1' },
        undefined,
      ),
    ).toMatchObject({ ok: true, debounceKey: 'note:n1' });
  });

  it.each([
    [
      'throws',
      () => {
        throw new Error('no key today');
      },
      'the debounce key function threw: Error: no key today',
    ],
    ['returns a number', () => 7 as unknown as string, 'the debounce key must be a string'],
    ['returns an empty string', () => '', 'the debounce key is empty'],
    ['returns a NUL', () => 'a\u0000', 'the debounce key has'],
    ['returns 513 characters', () => 'k'.repeat(513), 'over the limit of 512'],
  ])('refuses a key function that %s with invalid_debounce_key', (_, key, message) => {
    const admission = checkAdmission(debounced(key), { noteId: 'n1' }, undefined);
    expect(admission).toMatchObject({ ok: false, error: { code: 'invalid_debounce_key' } });
    if (!admission.ok) expect(admission.error.message).toContain(message);
  });
});
