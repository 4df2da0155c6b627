import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { utf8Length } from '../../packages/workflow/src/utf8-length';

describe('utf8Length', () => {
  it('equals the length TextEncoder encodes, for any string (lone surrogates too)', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' })),
        (text) => {
          expect(utf8Length(text)).toBe(new TextEncoder().encode(text).length);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('counts each width and the edges between them', () => {
    for (const text of [
      '',
      'a',
      '\u007f',
      '\u0080',
      'é',
      '\u07ff',
      '\u0800',
      '€',
      '\uffff',
      '😀',
      '\ud83d',
      '\ude00',
      'a\ud83d',
      '\ud83d\ud83d\ude00',
    ]) {
      expect(utf8Length(text)).toBe(new TextEncoder().encode(text).length);
    }
  });
});
