import {
  checkAdmission,
  defineWorkflow,
  payloadRef,
  payloadReference,
  step,
} from '@causeway/workflow/internal';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

const sha256 = 'a'.repeat(64);

describe('payloadRef and payloadReference (R30)', () => {
  it('accepts storage URIs with a version, and optional size and digest', () => {
    for (const reference of [
      { uri: 's3://notes/n1/body.md', version: '3HL4kqtJlcpXroDTDmJ' },
      { uri: 'gs://bucket/object', version: 1_360_887_697_105_000, sizeBytes: 0 },
      { uri: 'https://cdn.example/a?v=2', version: 'etag-1', sizeBytes: 10_485_760, sha256 },
      { uri: 'file:///var/data/blob.bin', version: 0 },
    ]) {
      const made = payloadRef(reference);
      expect(made).toEqual(reference);
      expect(Object.isFrozen(made)).toBe(true);
      expect(payloadReference.safeParse(reference).success).toBe(true);
    }
  });

  it.each([
    ['a relative path', { uri: 'notes/body.md', version: '1' }, 'uri'],
    ['a URI without //', { uri: 'mailto:someone@example.com', version: '1' }, 'uri'],
    ['whitespace in the URI', { uri: 's3://bucket/my key', version: '1' }, 'uri'],
    ['an empty version', { uri: 's3://b/k', version: '' }, 'version'],
    ['a negative version', { uri: 's3://b/k', version: -1 }, 'version'],
    ['a fractional size', { uri: 's3://b/k', version: '1', sizeBytes: 1.5 }, 'sizeBytes'],
    ['an upper-case digest', { uri: 's3://b/k', version: '1', sha256: 'A'.repeat(64) }, 'sha256'],
    ['the content itself', { uri: 's3://b/k', version: '1', content: 'x' }, '(root)'],
  ])('refuses %s, naming the field', (_label, reference, field) => {
    expect(() => payloadRef(reference as never)).toThrow(
      new RegExp(`^payloadRef: ${field.replace(/[()]/g, '\\$&')}`),
    );
    expect(payloadReference.safeParse(reference).success).toBe(false);
  });

  it('embeds in an input schema: a reference is admitted, the content past the limit is not', () => {
    const workflow = defineWorkflow({
      name: 'big-note',
      input: z.object({ noteId: z.string(), body: z.union([z.string(), payloadReference]) }),
      steps: { only: step({ run: () => ({}) }) },
    });
    const reference = payloadRef({ uri: 's3://notes/n1/body.md', version: 'v7', sizeBytes: 5e6 });
    expect(checkAdmission(workflow, { noteId: 'n1', body: reference }, undefined)).toMatchObject({
      ok: true,
      input: { noteId: 'n1', body: reference },
    });
    const inline = checkAdmission(workflow, { noteId: 'n1', body: 'x'.repeat(300_000) }, undefined);
    expect(inline).toMatchObject({ ok: false, error: { code: 'input_too_large' } });
    if (!inline.ok) {
      expect(inline.error.message).toContain('over the limit of 262144 bytes');
      expect(inline.error.message).toContain('payloadRef');
    }
  });
});
