import { deepFreeze } from '@causeway/workflow/internal';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

/** Every object and array reachable from `value` (including itself). */
function containers(value: unknown, found: object[] = []): object[] {
  if (typeof value !== 'object' || value === null) return found;
  found.push(value);
  for (const item of Object.values(value)) containers(item, found);
  return found;
}

describe('deepFreeze (R30)', () => {
  it('freezes every object and array of any JSON value and keeps it equal', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        const copy = structuredClone(value);
        const frozen = deepFreeze(value);
        expect(frozen).toBe(value);
        expect(frozen).toEqual(copy);
        for (const container of containers(frozen)) expect(Object.isFrozen(container)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('makes writes, deletes and pushes at any depth throw (ES modules are strict)', () => {
    const input = deepFreeze({
      title: 'draft',
      meta: { author: { name: 'ada' }, tags: ['a', 'b'] },
      blocks: [{ text: 'one' }],
    });
    const writable = input as unknown as {
      title: string;
      extra?: number;
      meta: { author: { name: string }; tags: string[] };
      blocks: { text: string }[];
    };
    expect(() => {
      writable.title = 'changed';
    }).toThrow(TypeError);
    expect(() => {
      writable.extra = 1;
    }).toThrow(TypeError);
    expect(() => {
      writable.meta.author.name = 'eve';
    }).toThrow(TypeError);
    expect(() => writable.meta.tags.push('c')).toThrow(TypeError);
    expect(() => {
      writable.blocks[0] = { text: 'replaced' };
    }).toThrow(TypeError);
    expect(() => {
      delete (writable.meta as { author?: unknown }).author;
    }).toThrow(TypeError);
    expect(input).toEqual({
      title: 'draft',
      meta: { author: { name: 'ada' }, tags: ['a', 'b'] },
      blocks: [{ text: 'one' }],
    });
  });

  it('passes primitives through and ends on cycles', () => {
    for (const value of [null, undefined, 0, 'text', true]) expect(deepFreeze(value)).toBe(value);
    const cyclic: { self?: unknown; list: unknown[] } = { list: [] };
    cyclic.self = cyclic;
    cyclic.list.push(cyclic);
    expect(deepFreeze(cyclic)).toBe(cyclic);
    expect(Object.isFrozen(cyclic) && Object.isFrozen(cyclic.list)).toBe(true);
  });
});
