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
