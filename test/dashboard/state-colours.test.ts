/**
 * Every state has its colours on the dashboard: a badge for each task and workflow state, and
 * a fill for each task state in the step graph. A state added to the machine without them
 * would be drawn unstyled (black in the graph).
 */
import { readFileSync } from 'node:fs';
import { taskStates, workflowStates } from '@causeway/workflow';
import { describe, expect, it } from 'vitest';

const css = readFileSync(
  new URL('../../packages/api/src/dashboard/assets/states.css', import.meta.url),
  'utf8',
);

describe('states.css', () => {
  it('colours the badge of every task and workflow state', () => {
    const states = [...new Set([...taskStates, ...workflowStates])];
    expect(states.filter((state) => !new RegExp(`^\\.state-${state}[ ,]`, 'm').test(css))).toEqual(
      [],
    );
  });

  it('fills the graph node of every task state', () => {
    expect(taskStates.filter((state) => !css.includes(`svg.graph .state-${state} rect`))).toEqual(
      [],
    );
  });
});
