import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// The long scenarios mirror the short ones: each long file has a short version of the same name.
describe('reliability layout', () => {
  it('every long scenario has a short version in pnpm test', () => {
    const long = readdirSync(new URL('.', import.meta.url)).filter(
      (name) => name.endsWith('.test.ts') && name !== 'layout.test.ts',
    );
    const short = new Set(readdirSync(new URL('..', import.meta.url)));
    expect(long.filter((name) => !short.has(name))).toEqual([]);
  });
});
