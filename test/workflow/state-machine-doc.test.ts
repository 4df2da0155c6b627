import { readFileSync } from 'node:fs';
import { reasonCodes, taskEdges } from '@causeway/workflow/internal';
import { describe, expect, it } from 'vitest';
import { renderStateMachineDoc } from '../../scripts/state-machine-doc';

describe('docs/state-machine.md', () => {
  it('is exactly what the generator makes from the edge table (run `pnpm generate`)', () => {
    const committed = readFileSync(new URL('../../docs/state-machine.md', import.meta.url), 'utf8');
    expect(committed).toBe(renderStateMachineDoc());
  });

  it('lists every edge and every reason code', () => {
    const doc = renderStateMachineDoc();
    for (const edge of taskEdges) {
      expect(doc).toContain(`  ${edge.from ?? '[*]'} --> ${edge.to}: ${edge.reasons.join(', ')}`);
    }
    for (const reason of reasonCodes) expect(doc).toContain(`| \`${reason}\` |`);
  });
});
