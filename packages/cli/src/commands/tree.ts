import type { CommandSpec, Invocation } from '../command';
import { usageError } from '../exit-codes';
import { code } from '../format';
import { graphqlRequest } from '../graphql-client';
import {
  type ChildCountsView,
  childCountsSelection,
  childCountsText,
  parentSelection,
  type TreeParent,
} from '../tree-views';
import { requireWorkflow } from './workflows';

/**
 * `tree`: a workflow and the child workflows below it (R48), each with its state, each step
 * with its state, its children counted and its blocker, down to `--depth` levels and at most
 * `--limit` children per step ("… and 9,990 more"). One request for the workflow, then one per
 * step with children that is shown.
 */

interface NodeData {
  id: string;
  name: string;
  state: string;
  tasks: { id: string; step: string; state: string }[];
  blockers: { taskId: string; step: string; code: string; message: string }[];
  childCounts: ChildCountsView[];
}

const nodeFields = `id name state tasks { id step state }
  blockers { taskId step code message } ${childCountsSelection}`;

const startQuery = `query CausewayTree($id: ID!) {
  workflow(id: $id) {
    ${nodeFields}
    ${parentSelection}
  }
}`;

const childrenQuery = `query CausewayTreeChildren($id: ID!, $step: String!, $first: Int!) {
  workflow(id: $id) {
    children(step: $step, first: $first) {
      edges { node { ${nodeFields} parent { index } } }
    }
  }
}`;

export interface TreeStep {
  step: string;
  taskId: string;
  state: string;
  blocker: { code: string; message: string } | null;
  /** Null for a step that started no child workflow. */
  children: {
    counts: ChildCountsView;
    shown: TreeNode[];
    /** Children not shown (past `--limit`, or all of them past `--depth`). */
    more: number;
    /** True when `--depth` stopped the tree here. */
    depthLimited: boolean;
  } | null;
}

export interface TreeNode {
  id: string;
  name: string;
  state: string;
  /** Its index among its parent step's children; null for the workflow the tree starts at. */
  index: number | null;
  steps: TreeStep[];
}

interface Bounds {
  readonly depth: number;
  readonly limit: number;
}

function wholeOption(invocation: Invocation, name: string, fallback: number, max: number): number {
  const value = invocation.option(name);
  if (value === undefined) return fallback;
  const number = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  const min = name === 'limit' ? 1 : 0;
  if (!(number >= min && number <= max)) {
    throw usageError(`--${name} must be a whole number from ${min} to ${max}, got ${value}`);
  }
  return number;
}

async function childrenOf(
  invocation: Invocation,
  workflowId: string,
  step: string,
  bounds: Bounds,
): Promise<(NodeData & { parent: { index: number } })[]> {
  const data = await graphqlRequest<{
    workflow: {
      children: { edges: { node: NodeData & { parent: { index: number } } }[] };
    } | null;
  }>(invocation.endpoint, childrenQuery, { id: workflowId, step, first: bounds.limit });
  return data.workflow?.children.edges.map((edge) => edge.node) ?? [];
}

async function nodeOf(
  invocation: Invocation,
  data: NodeData,
  index: number | null,
  bounds: Bounds,
  level: number,
): Promise<TreeNode> {
  const steps: TreeStep[] = [];
  for (const task of data.tasks) {
    const blocker = data.blockers.find((candidate) => candidate.taskId === task.id);
    const counts = data.childCounts.find((candidate) => candidate.step === task.step);
    let children: TreeStep['children'] = null;
    if (counts !== undefined) {
      const listed = counts.byState.reduce((sum, entry) => sum + entry.count, 0);
      const depthLimited = level >= bounds.depth;
      const shown: TreeNode[] = [];
      if (!depthLimited && listed > 0) {
        for (const child of await childrenOf(invocation, data.id, task.step, bounds)) {
          shown.push(await nodeOf(invocation, child, child.parent.index, bounds, level + 1));
        }
      }
      children = { counts, shown, more: Math.max(0, listed - shown.length), depthLimited };
    }
    steps.push({
      step: task.step,
      taskId: task.id,
      state: task.state,
      blocker: blocker === undefined ? null : { code: blocker.code, message: blocker.message },
      children,
    });
  }
  return { id: data.id, name: data.name, state: data.state, index, steps };
}

/** The tree as text: one line per workflow and step, with `├─`, `│` and `└─` guides. */
export function treeText(
  tree: TreeNode,
  parent: TreeParent | null,
  style: { state(text: string): string; dim(text: string): string },
): string {
  const lines: string[] = [];
  if (parent !== null) {
    lines.push(
      style.dim(
        `child #${parent.index} of ${parent.workflow.name} ${parent.workflow.id} (step ${parent.step}), depth ${parent.depth}, root ${parent.root.name} ${parent.root.id}${parent.detached ? ', detached' : ''}`,
      ),
    );
  }
  const workflowLine = (node: TreeNode) =>
    `${node.index === null ? '' : `#${node.index} `}${node.name} ${node.id}  ${style.state(code(node.state))}`;
  const walk = (node: TreeNode, indent: string) => {
    node.steps.forEach((step, position) => {
      const last = position === node.steps.length - 1;
      const below = `${indent}${last ? '   ' : '│  '}`;
      const counts = step.children === null ? '' : `  ${childCountsText(step.children.counts)}`;
      lines.push(
        `${indent}${last ? '└─' : '├─'} ${step.step}  ${style.state(code(step.state))}${counts}`,
      );
      if (step.blocker !== null) lines.push(`${below}${style.dim(`why: ${step.blocker.message}`)}`);
      const children = step.children;
      if (children === null) return;
      children.shown.forEach((child, index) => {
        const lastChild = index === children.shown.length - 1 && children.more === 0;
        lines.push(`${below}${lastChild ? '└─' : '├─'} ${workflowLine(child)}`);
        walk(child, `${below}${lastChild ? '   ' : '│  '}`);
      });
      if (children.more > 0) {
        const why = children.depthLimited ? ' (deeper than --depth)' : '';
        lines.push(`${below}└─ … and ${children.more.toLocaleString('en')} more${why}`);
      }
    });
  };
  lines.push(workflowLine(tree));
  walk(tree, '');
  return lines.join('\n');
}

const tree: CommandSpec = {
  name: 'tree',
  summary:
    'a workflow and its child workflows below it: states, child counts and blockers per step',
  args: [{ name: 'workflowId', required: true }],
  options: {
    depth: {
      type: 'string',
      value: 'n',
      description: 'levels of child workflows to show below it, 0 to 10 (default 3)',
    },
    limit: {
      type: 'string',
      value: 'n',
      description: 'child workflows shown per step, 1 to 100 (default 10); the rest are counted',
    },
  },
  async run(invocation) {
    const bounds = {
      depth: wholeOption(invocation, 'depth', 3, 10),
      limit: wholeOption(invocation, 'limit', 10, 100),
    };
    const { workflow } = await requireWorkflow<NodeData & { parent: TreeParent | null }>(
      invocation,
      startQuery,
      invocation.requiredArg('workflowId'),
    );
    const node = await nodeOf(invocation, workflow, null, bounds, 0);
    const data = { tree: { ...node, parent: workflow.parent } };
    invocation.output.result(data, () => treeText(node, workflow.parent, invocation.output.style));
    return undefined;
  },
};

export const treeCommands: readonly CommandSpec[] = [tree];
