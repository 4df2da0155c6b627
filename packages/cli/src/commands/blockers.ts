import type { CommandSpec } from '../command';
import { code, instant } from '../format';
import { isTerminal } from '../progress';
import { table } from '../table';
import { requireWorkflow } from './workflows';

/** `why`: for every step that is not moving, what blocks it (GraphQL `Workflow.blockers`). */

export interface BlockerView {
  taskId: string;
  step: string;
  code: string;
  message: string;
  until: string | null;
  facts: Record<string, unknown>;
}

const whyQuery = `query CausewayWhy($id: ID!) {
  workflow(id: $id) { id name state blockers { taskId step code message until facts } }
}`;

const why: CommandSpec = {
  name: 'why',
  summary: 'what blocks each step of a workflow that is not moving, as a code and a sentence',
  args: [{ name: 'workflowId', required: true }],
  options: {},
  async run(invocation) {
    const data = await requireWorkflow<{
      id: string;
      name: string;
      state: string;
      blockers: BlockerView[];
    }>(invocation, whyQuery, invocation.requiredArg('workflowId'));
    const { workflow } = data;
    const { style } = invocation.output;
    invocation.output.result(data, () => {
      const head = `workflow ${workflow.id}  ${workflow.name}  ${style.state(code(workflow.state))}`;
      if (workflow.blockers.length === 0) {
        return `${head}\nnothing blocks it: ${isTerminal(workflow.state) ? 'it has ended' : 'no step reports a blocker'}`;
      }
      const now = invocation.now();
      return `${head}\n\n${table(
        ['STEP', 'BLOCKER', 'UNTIL', 'WHY'],
        workflow.blockers.map((blocker) => [
          blocker.step,
          style.state(code(blocker.code)),
          instant(blocker.until, now),
          blocker.message,
        ]),
      )}`;
    });
    return undefined;
  },
};

export const blockerCommands: readonly CommandSpec[] = [why];
