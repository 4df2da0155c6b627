import pg from 'pg';

/** One node of `EXPLAIN (FORMAT JSON)`, with the fields plan tests read. */
export interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly 'Index Name'?: string;
  readonly 'Index Cond'?: string;
  readonly Filter?: string;
  /** With ANALYZE. */
  readonly 'Actual Rows'?: number;
  readonly 'Actual Loops'?: number;
  readonly 'Rows Removed by Filter'?: number;
  /** With BUFFERS. */
  readonly 'Shared Hit Blocks'?: number;
  readonly 'Shared Read Blocks'?: number;
  readonly Plans?: readonly PlanNode[];
}

/** The node and every node below it, depth first. */
export function planNodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(planNodes)];
}

/** Somewhere to run EXPLAIN: a server URL (a connection of its own) or a connected client. */
export type ExplainTarget = string | pg.ClientBase;

/**
 * Every node of the plan of `sql` with `parameters`, explained with `options` besides
 * `format json` (e.g. `analyze, buffers`): ANALYZE runs the statement.
 */
export async function explainNodes(
  target: ExplainTarget,
  sql: string,
  parameters: readonly unknown[] = [],
  options = '',
): Promise<PlanNode[]> {
  const text = `explain (${options === '' ? '' : `${options}, `}format json) ${sql}`;
  const run = async (client: pg.ClientBase) =>
    (await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(text, [...parameters])).rows;
  let rows: { 'QUERY PLAN': { Plan: PlanNode }[] }[];
  if (typeof target === 'string') {
    const client = new pg.Client({ connectionString: target });
    await client.connect();
    try {
      rows = await run(client);
    } finally {
      await client.end();
    }
  } else {
    rows = await run(target);
  }
  const plan = rows[0]?.['QUERY PLAN'][0]?.Plan;
  if (plan === undefined) throw new Error('EXPLAIN returned no plan');
  return planNodes(plan);
}

/** Pages of the tables and indexes the plan reads (catalog lookups, counted at the top, left out). */
export function relationBuffers(nodes: readonly PlanNode[]): number {
  return nodes
    .filter((node) => node['Relation Name'] !== undefined)
    .reduce(
      (total, node) => total + (node['Shared Hit Blocks'] ?? 0) + (node['Shared Read Blocks'] ?? 0),
      0,
    );
}

/** `Node Type` and the index (or else table) of each node that reads a relation. */
export function relationScans(nodes: readonly PlanNode[]): string[] {
  return nodes
    .filter((node) => node['Relation Name'] !== undefined)
    .map((node) => `${node['Node Type']} ${node['Index Name'] ?? node['Relation Name']}`);
}

/**
 * A statement's plan, run (EXPLAIN ANALYZE): the tables it scanned whole, the indexes it used
 * and how many rows its scans read (returned or removed by a filter, times their loops).
 */
export async function analyzedReads(
  target: ExplainTarget,
  compiled: { readonly sql: string; readonly parameters: readonly unknown[] },
): Promise<{ seqScans: string[]; indexes: string[]; rowsRead: number }> {
  const plan = await explainNodes(target, compiled.sql, compiled.parameters, 'analyze');
  const scans = plan.filter((node) => node['Node Type'].includes('Scan'));
  return {
    seqScans: plan.flatMap((node) =>
      node['Node Type'] === 'Seq Scan' ? [node['Relation Name'] as string] : [],
    ),
    indexes: [...new Set(plan.flatMap((node) => node['Index Name'] ?? []))].sort(),
    rowsRead: scans.reduce(
      (sum, node) =>
        sum +
        ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0)) *
          (node['Actual Loops'] ?? 1),
      0,
    ),
  };
}
