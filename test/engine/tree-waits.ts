/**
 * Where the tests of R48 wait for their tree (test/engine/tree-workflows.ts) to stop moving:
 * `tree-root` with groups [[-1, 1, 2], [3]] has three leaves waiting for their event and one
 * dead. Read from the stored rows, as the tests' ground truth.
 */
import { query } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';

/** The children of `parent`, in index order (replaced ones included: the tests replay none). */
export async function childIds(databaseUrl: string, parent: string): Promise<string[]> {
  const rows = await query<{ id: string }>(
    databaseUrl,
    'select id::text from causeway_workflows where parent_workflow_id = $1 order by child_index',
    [parent],
  );
  return rows.map((row) => row.id);
}

/**
 * Waits until the leaves below `root` are in `states` (sorted, comma-joined; by default three
 * waiting and one dead), then gives the middle workflows and the first one's leaves.
 */
export async function treeAtRest(
  databaseUrl: string,
  root: string,
  states = 'dead,waiting,waiting,waiting',
): Promise<{ mids: string[]; leaves: string[] }> {
  await waitFor(
    async () => {
      const rows = await query<{ state: string }>(
        databaseUrl,
        'select state from causeway_workflows where root_workflow_id = $1 and depth = 2',
        [root],
      );
      return (
        rows
          .map((row) => row.state)
          .sort()
          .join() === states
      );
    },
    { timeoutMs: 30_000, description: `the leaves ${states}` },
  );
  const mids = await childIds(databaseUrl, root);
  return { mids, leaves: await childIds(databaseUrl, mids[0] as string) };
}
