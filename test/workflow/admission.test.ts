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
    });
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
