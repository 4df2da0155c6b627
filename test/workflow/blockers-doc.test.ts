import { readFileSync } from 'node:fs';
import { blockerCodeMeanings, blockerCodes } from '@causeway/workflow/internal';
import { describe, expect, it } from 'vitest';
import { renderBlockersDoc } from '../../scripts/blockers-doc';

describe('docs/blockers.md', () => {
  it('is exactly what the generator makes from the blocker codes (run `pnpm generate`)', () => {
    const committed = readFileSync(new URL('../../docs/blockers.md', import.meta.url), 'utf8');
    expect(committed).toBe(renderBlockersDoc());
  });

  it('lists every code with its meaning, and every fact of each', () => {
    const doc = renderBlockersDoc();
    for (const code of blockerCodes) {
      expect(doc).toContain(`| \`${code}\` | ${blockerCodeMeanings[code].meaning} |`);
      expect(doc).toContain(`### \`${code}\``);
      const section = doc.slice(doc.indexOf(`### \`${code}\``)).split('\n### ')[0] as string;
      for (const fact of Object.keys(blockerCodeMeanings[code].facts)) {
        expect(section, `${code}.${fact}`).toContain(`| \`${fact}\` |`);
      }
    }
  });
});
