/**
 * The step graph's layered layout: every edge points to a later column, no two nodes overlap,
 * and the SVG has one node per step, classed by its task's state, with waits and delays marked.
 */
import { describe, expect, it } from 'vitest';
import {
  type GraphStep,
  layoutSteps,
  nodeHeight,
  nodeWidth,
  renderStepGraph,
} from '../../packages/api/src/dashboard/step-graph';

const plain = (name: string, after: string[] = []): GraphStep => ({
  name,
  after,
  event: null,
  delayMs: null,
});

describe('the step graph', () => {
  it('puts each step one column after its deepest upstream step, without overlaps', () => {
    const steps = [
      plain('fetch'),
      plain('thumbnail', ['fetch']),
      plain('transcode', ['fetch']),
      plain('audit'),
      plain('publish', ['thumbnail', 'transcode', 'audit']),
      plain('notify', ['publish', 'fetch']),
    ];
    const layout = layoutSteps(steps);
    const column = Object.fromEntries(layout.nodes.map((node) => [node.step.name, node.layer]));
    expect(column).toEqual({
      fetch: 0,
      audit: 0,
      thumbnail: 1,
      transcode: 1,
      publish: 2,
      notify: 3,
    });
    expect(layout.edges).toHaveLength(7);
    for (const { from, to } of layout.edges) expect(from.x + nodeWidth).toBeLessThan(to.x);
    for (const a of layout.nodes) {
      expect(a.x + nodeWidth).toBeLessThanOrEqual(layout.width);
      expect(a.y + nodeHeight).toBeLessThanOrEqual(layout.height);
      for (const b of layout.nodes) {
        if (a === b) continue;
        const apart =
          a.x + nodeWidth <= b.x ||
          b.x + nodeWidth <= a.x ||
          a.y + nodeHeight <= b.y ||
          b.y + nodeHeight <= a.y;
        expect(apart, `${a.step.name} and ${b.step.name}`).toBe(true);
      }
    }
  });

  it('draws a node per step, classed by state, with the wait, the delay and the due time', () => {
    const now = new Date('2027-01-01T12:00:00Z');
    const svg = renderStepGraph(
      [
        plain('render'),
        { name: 'approval', after: ['render'], event: 'note.approved', delayMs: null },
        { name: 'publish', after: ['approval'], event: null, delayMs: 60_000 },
        plain('archive', ['publish']),
      ],
      [
        { id: 't1', step: 'render', state: 'SUCCEEDED', attempt: 1, maxAttempts: 3, runAt: null },
        { id: 't2', step: 'approval', state: 'WAITING', attempt: 0, maxAttempts: 1, runAt: null },
        {
          id: 't3',
          step: 'publish',
          state: 'QUEUED',
          attempt: 0,
          maxAttempts: 4,
          runAt: '2027-01-01T12:01:00.000Z',
        },
      ],
      now,
    ).value;
    const nodes = [...svg.matchAll(/<g class="node ([^"]+)" data-step="([^"]+)"/g)].map((m) => [
      m[2],
      m[1],
    ]);
    expect(nodes).toEqual([
      ['render', 'state-succeeded'],
      ['approval', 'state-waiting waits'],
      ['publish', 'state-queued delayed'],
      ['archive', 'state-unknown'],
    ]);
    expect(svg).toContain('>waits for note.approved</text>');
    expect(svg).toContain('>due 12:01:00</text>');
    expect(svg).toContain('>attempt 1 of 3</text>');
    expect(svg.match(/<path class="edge"/g)).toHaveLength(3);
    // Nodes with a task link to its details; the one without (unknown here) does not.
    expect(svg).toContain(
      '<a href="#task-t2" aria-label="approval: waiting, waits for note.approved">',
    );
    expect(svg).not.toContain('data-step="archive" data-state="unknown"></a>');
  });
});
