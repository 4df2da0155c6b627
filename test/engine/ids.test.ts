import { describe, expect, it } from 'vitest';
import { newId } from '../../packages/engine/src/ids';

const version7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('row ids', () => {
  it('are version 7 UUIDs that start with their millisecond', () => {
    const at = Date.UTC(2026, 10, 29, 23, 0, 0, 123);
    const id = newId(at);
    expect(id).toMatch(version7);
    expect(Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16)).toBe(at);
  });

  it('sort by the time they were made, and never repeat', () => {
    const ids = Array.from({ length: 50_000 }, (_, i) =>
      newId(1_700_000_000_000 + Math.floor(i / 100)),
    );
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(version7);
    const prefixes = ids.map((id) => id.slice(0, 13));
    expect([...prefixes].sort()).toEqual(prefixes);
    // The random part is random: every variant digit (2 random bits) and every hex digit in
    // each random position occur.
    expect(new Set(ids.map((id) => id[19])).size).toBe(4);
    for (const position of [15, 16, 17, 20, 21, 22, 24, 35]) {
      expect(new Set(ids.map((id) => id[position])).size).toBe(16);
    }
  });
});
