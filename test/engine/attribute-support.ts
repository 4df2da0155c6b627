import { query } from '../helpers/engine';

/** A workflow's attribute rows (R55) as their terms, in term order. */
export async function attributeTerms(databaseUrl: string, workflowId: string): Promise<string[]> {
  const rows = await query<{ term: string }>(
    databaseUrl,
    'select term from causeway_workflow_attributes where workflow_id = $1 order by term',
    [workflowId],
  );
  return rows.map((row) => row.term);
}

/** The attribute rows of a workflow's children as their terms, child by child (R55, R43). */
export async function childAttributeTerms(
  databaseUrl: string,
  parentId: string,
): Promise<string[]> {
  const rows = await query<{ term: string }>(
    databaseUrl,
    `select a.term from causeway_workflow_attributes a
       join causeway_workflows w on w.id = a.workflow_id and w.created_at = a.created_at
      where w.parent_workflow_id = $1 order by w.child_index, a.term`,
    [parentId],
  );
  return rows.map((row) => row.term);
}
