/**
 * R55 in the domain: the bounds of attributes, how sources merge (a key given twice must agree,
 * type included; never more than 16 together), a definition's function refused when it throws
 * or returns something out of bounds, a `startChildren` call's attributes kept as given or
 * copied, and `key=value` text that reads back as it was written.
 */
import {
  type AttributeValue,
  admitAttributes,
  attributeAsText,
  attributeFromText,
  attributeLimits,
  attributesProblem,
  DefinitionError,
  defineWorkflow,
  mergedAttributes,
  startChild,
  startChildren,
  step,
} from '@causeway/workflow/internal';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

const key = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_.-]{0,20}$/);
const value: fc.Arbitrary<AttributeValue> = fc.oneof(
  fc.string({ maxLength: 40 }).filter((text) => attributesProblem({ k: text }) === null),
  // -0 is 0 as an attribute: JSON has no -0.
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => (n === 0 ? 0 : n)),
  fc.integer(),
  fc.boolean(),
);

describe('attribute bounds', () => {
  it('accepts up to 16 bounded keys of strings, finite numbers and booleans', () => {
    const sixteen = Object.fromEntries(
      Array.from({ length: attributeLimits.maxKeys }, (_, n) => [`k${n}`, n]),
    );
    expect(attributesProblem(sixteen)).toBeNull();
    expect(attributesProblem({ [`k${'x'.repeat(63)}`]: 's'.repeat(256) })).toBeNull();
    expect(attributesProblem({ 'a.b-c_d': -0.5, ok: false, Tenant: '' })).toBeNull();
    expect(attributesProblem({})).toBeNull();
  });

  it.each([
    ['not an object', 'tenant=acme'],
    ['null', null],
    ['an array', [['tenant', 'acme']]],
    ['a Date', new Date()],
    ['17 keys', Object.fromEntries(Array.from({ length: 17 }, (_, n) => [`k${n}`, n]))],
    ['a key with a space', { 'a b': 1 }],
    ['a key starting with "_"', { _tenant: 1 }],
    ['a key of 65 characters', { [`k${'x'.repeat(64)}`]: 1 }],
    ['a string of 257 characters', { s: 'x'.repeat(257) }],
    ['a lone surrogate', { s: '\ud800' }],
    ['-Infinity', { n: Number.NEGATIVE_INFINITY }],
    ['undefined', { n: undefined }],
    ['a bigint', { n: 1n }],
  ])('refuses %s', (_label, attributes) => {
    expect(attributesProblem(attributes)).toEqual(expect.any(String));
  });
});

describe('merging attributes', () => {
  it('keeps every key of every source; a key twice must agree in value and type', () => {
    fc.assert(
      fc.property(
        fc.dictionary(key, value, { maxKeys: 8 }),
        fc.dictionary(key, value, { maxKeys: 8 }),
        (a, b) => {
          const merged = mergedAttributes([
            { label: 'a', attributes: a },
            { label: 'b', attributes: b },
          ]);
          const clash = Object.keys(a).some(
            (name) => Object.hasOwn(b, name) && !Object.is(a[name], b[name]) && a[name] !== b[name],
          );
          expect(merged.ok).toBe(!clash);
          if (merged.ok) expect(merged.attributes).toEqual({ ...a, ...b });
        },
      ),
    );
  });

  it('refuses 5 against "5" and more than 16 keys together', () => {
    const typed = mergedAttributes([
      { label: "the parent's attributes", attributes: { tier: 5 } },
      { label: "the definition's attributes", attributes: { tier: '5' } },
    ]);
    expect(typed).toEqual({
      ok: false,
      problem:
        'attribute "tier" is 5 in the parent\'s attributes but "5" in the definition\'s attributes: a key given twice must have one value',
    });
    const many = (prefix: string) =>
      Object.fromEntries(Array.from({ length: 9 }, (_, n) => [`${prefix}${n}`, n]));
    expect(
      mergedAttributes([
        { label: 'a', attributes: many('a') },
        { label: 'b', attributes: many('b') },
      ]),
    ).toEqual({ ok: false, problem: 'a and b make 18 attributes together, over the limit of 16' });
  });

  it("admits a definition's attributes with the caller's and a parent's, refusing with codes", () => {
    const attributesOf = (input: { tenant: string }) => {
      if (input.tenant === 'boom') throw new Error('boom');
      return input.tenant === 'bad' ? { tenant: Number.NaN } : { tenant: input.tenant };
    };
    const definition = { attributes: attributesOf as (input: never) => unknown };
    expect(admitAttributes(definition, { tenant: 'acme' }, { caller: { tier: 1 } })).toEqual({
      ok: true,
      attributes: { tenant: 'acme', tier: 1 },
    });
    expect(admitAttributes({}, {}, {})).toEqual({ ok: true, attributes: null });
    expect(admitAttributes({}, {}, { parent: { a: true } })).toEqual({
      ok: true,
      attributes: { a: true },
    });
    const code = (answer: ReturnType<typeof admitAttributes>) =>
      answer.ok ? null : answer.error.code;
    expect(code(admitAttributes(definition, { tenant: 'boom' }, {}))).toBe(
      'invalid_definition_attributes',
    );
    expect(code(admitAttributes(definition, { tenant: 'bad' }, {}))).toBe(
      'invalid_definition_attributes',
    );
    expect(code(admitAttributes(definition, { tenant: 'acme' }, { caller: { 'a b': 1 } }))).toBe(
      'invalid_attributes',
    );
    expect(
      code(admitAttributes(definition, { tenant: 'acme' }, { parent: { tenant: 'globex' } })),
    ).toBe('conflicting_attributes');
  });

  it("keeps a startChildren call's good attributes as a frozen copy and bad ones as given", () => {
    const definition = defineWorkflow({
      name: 'attr-start-copy',
      input: z.object({}),
      steps: { only: step({ run: () => 1 }) },
    });
    const given: Record<string, AttributeValue> = { platform: 'x' };
    const request = startChildren(definition, [{}], { attributes: given });
    given.platform = 'changed after run returned';
    expect(request.attributes).toEqual({ platform: 'x' });
    expect(Object.isFrozen(request.attributes)).toBe(true);
    expect(startChild(definition, {}).attributes).toBeNull();
    const bad = ['x'] as unknown as Record<string, AttributeValue>;
    expect(startChild(definition, {}, { attributes: bad }).attributes).toBe(bad);
  });

  it('refuses a definition whose attributes is not a function', () => {
    expect(() =>
      defineWorkflow({
        name: 'attr-bad',
        input: z.object({}),
        attributes: { tenant: 'acme' } as never,
        steps: { only: step({ run: () => null }) },
      }),
    ).toThrow(DefinitionError);
  });
});

describe('attributes as key=value text', () => {
  it('reads back what it writes, type included', () => {
    fc.assert(
      fc.property(key, value, (name, written) => {
        const read = attributeFromText(attributeAsText(name, written));
        expect(read).toEqual({ ok: true, key: name, value: written });
      }),
    );
  });

  it.each([
    ['tier=5', 5],
    ['tier=-2.5e3', -2500],
    ['tier="5"', '5'],
    ['tier=true', true],
    ['tier="true"', 'true'],
    ['tier=acme corp', 'acme corp'],
    ['tier=a=b', 'a=b'],
    ['tier=05', '05'],
    ['tier=', ''],
  ])('%s is %j', (text, expected) => {
    expect(attributeFromText(text)).toEqual({ ok: true, key: 'tier', value: expected });
  });

  it('refuses text without a key', () => {
    expect(attributeFromText('tenant').ok).toBe(false);
    expect(attributeFromText('=acme').ok).toBe(false);
    expect(attributeFromText('k="a"b"').ok).toBe(false);
  });
});
