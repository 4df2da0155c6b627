/**
 * The trees of the children races (children-races.test.ts) as the database holds them: a
 * parent, its children, every task's log; and what a finished tree breaks of the contract
 * (model-children-contract.ts, test/helpers/contract-tables.ts), read with plain SQL.
 */
import type { ReasonCode, TaskState } from '@causeway/workflow/internal';
import type pg from 'pg';
import {
  specActorKind,
  specAllowsEdge,
  specParentState,
  specTerminalStates,
} from '../helpers/contract-tables';
import type { StepRow } from './children-races-support';
import { specChildClass } from './model-children-contract';

export interface TreeEdge {
  readonly id: number;
  /** The transaction that wrote the row (rows of one transaction share it). */
  readonly xid: string;
  readonly from: TaskState | null;
  readonly to: TaskState;
  readonly reason: ReasonCode;
  readonly actor: string;
  readonly detail: Readonly<Record<string, unknown>> | null;
}

export interface TreeWorkflow {
  readonly id: string;
  readonly state: string;
  readonly index: number | null;
  readonly replaced: boolean;
  readonly token: string;
  readonly tasks: readonly (StepRow & { readonly edges: readonly TreeEdge[] })[];
}

/** A parent and its children as the database holds them, with every task's log. */
export interface Tree {
  readonly root: TreeWorkflow;
  readonly children: readonly TreeWorkflow[];
}

/** The trees of `rootIds`, read in three statements. */
export async function readTrees(pool: pg.Pool, rootIds: readonly string[]): Promise<Tree[]> {
  const { rows: workflows } = await pool.query<{
    id: string;
    state: string;
    parent_workflow_id: string | null;
    child_index: number | null;
    replaced: boolean;
    token: string | null;
  }>(
    `select id, state, parent_workflow_id, child_index, replaced, input->>'token' as token
       from causeway_workflows where id = any($1::uuid[]) or parent_workflow_id = any($1::uuid[])
      order by child_index, created_at`,
    [rootIds],
  );
  const ids = workflows.map((row) => row.id);
  const { rows: tasks } = await pool.query<StepRow & { workflow_id: string }>(
    `select id, workflow_id, state, children_total, children_succeeded, children_failed
       from causeway_tasks where workflow_id = any($1::uuid[])`,
    [ids],
  );
  const { rows: edges } = await pool.query<{
    id: string;
    xid: string;
    task_id: string;
    from_state: TaskState | null;
    to_state: TaskState;
    reason: ReasonCode;
    actor: string;
    detail: Record<string, unknown> | null;
  }>(
    `select id, xmin::text as xid, task_id, from_state, to_state, reason, actor, detail
       from causeway_transitions
      where workflow_id = any($1::uuid[]) and task_id is not null order by id`,
    [ids],
  );
  const edgesOf = new Map<string, TreeEdge[]>();
  for (const row of edges) {
    const list = edgesOf.get(row.task_id) ?? [];
    list.push({
      id: Number(row.id),
      xid: row.xid,
      from: row.from_state,
      to: row.to_state,
      reason: row.reason,
      actor: row.actor,
      detail: row.detail,
    });
    edgesOf.set(row.task_id, list);
  }
  const shaped = workflows.map((row) => ({
    id: row.id,
    parentId: row.parent_workflow_id,
    tree: {
      id: row.id,
      state: row.state,
      index: row.child_index,
      replaced: row.replaced,
      token: row.token ?? '',
      tasks: tasks
        .filter((task) => task.workflow_id === row.id)
        .map((task) => ({ ...task, edges: edgesOf.get(task.id) ?? [] })),
    },
  }));
  return rootIds.map((rootId) => ({
    root: shaped.find((row) => row.id === rootId)?.tree as TreeWorkflow,
    children: shaped.filter((row) => row.parentId === rootId).map((row) => row.tree),
  }));
}

/**
 * What a finished tree breaks of the contract: an edge the table does not allow, a log that
 * does not chain or does not end in the task's state (R25), a workflow whose state is not its
 * tasks' aggregation (§4), a task left unfinished, a tally unequal to the counted children's
 * states (R45).
 */
export function treeProblems(tree: Tree): string[] {
  const problems: string[] = [];
  for (const workflow of [tree.root, ...tree.children]) {
    const where = workflow === tree.root ? 'parent' : `child ${workflow.index} ${workflow.token}`;
    for (const task of workflow.tasks) {
      let previous: TaskState | null = null;
      for (const edge of task.edges) {
        if (!specAllowsEdge(edge.from, edge.to, edge.reason, specActorKind(edge.actor))) {
          problems.push(`${where}: ${edge.from} → ${edge.to} (${edge.reason}) by ${edge.actor}`);
        }
        if (edge.from !== previous) problems.push(`${where}: ${edge.from} follows ${previous}`);
        previous = edge.to;
      }
      if (previous !== task.state) problems.push(`${where}: ${task.state}, log ends ${previous}`);
      if (!specTerminalStates.includes(task.state)) problems.push(`${where}: left ${task.state}`);
    }
    const aggregated = specParentState(workflow.tasks.map((task) => task.state));
    if (workflow.state !== aggregated) {
      problems.push(`${where}: workflow ${workflow.state}, its tasks say ${aggregated}`);
    }
  }
  const step = tree.root.tasks[0];
  const counted = tree.children.filter((candidate) => !candidate.replaced);
  const classes = counted.map((candidate) => specChildClass(candidate.state));
  const tally = {
    total: counted.length,
    succeeded: classes.filter((which) => which === 'succeeded').length,
    failed: classes.filter((which) => which === 'failed').length,
  };
  const stored = {
    total: step?.children_total,
    succeeded: step?.children_succeeded,
    failed: step?.children_failed,
  };
  if (JSON.stringify(stored) !== JSON.stringify(tally)) {
    problems.push(`tally ${JSON.stringify(stored)}, children say ${JSON.stringify(tally)}`);
  }
  return problems;
}

/** The reasons of a task's edges, in log order. */
export function reasonsOf(task: { readonly edges: readonly TreeEdge[] } | undefined): string {
  return (task?.edges ?? []).map((edge) => edge.reason).join(' ');
}
