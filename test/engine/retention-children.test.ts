import { startChildren, workflow } from '@causeway/workflow/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { dayMs, submitOnDay } from './retention-support';

/**
 * R59 with R45, R47: an awaited child is live while its parent still moves (the parent step's
 * output and a replay of it read it), and goes with its parent once the tree has finished.
 */
const database = useTestDatabase();
const url = () => database().url;

const leaf = workflow({ name: 'retention-leaf', input: z.object({ n: z.number() }) })
  .step('work', { queue: 'q-retention-tree', run: (ctx) => ctx.input.n })
  .build();
/** Its children finish at once; then the root waits for an event the test sends when it likes. */
const tree = workflow({ name: 'retention-tree', input: z.object({ key: z.string() }) })
  .step('fan', {
    queue: 'q-retention-tree',
    run: () => startChildren(leaf, [{ n: 1 }, { n: 2 }]),
  })
  .event('hold', {
    after: ['fan'],
    name: 'retention.tree',
    key: (ctx) => ctx.input.key,
    timeoutMs: 300 * dayMs,
  })
  .build();
const engine = () => testEngine(url(), { workflows: [leaf, tree], sweepIntervalMs: 50 });
const request = { operator: 'ops@example', reason: 'keep 30 days' };
let rootId = '';

async function treeStates(): Promise<string[]> {
  const rows = await query<{ state: string }>(
    url(),
    `select state from causeway_workflows where id = $1 or root_workflow_id = $1
      order by depth, child_index nulls first, created_at`,
    [rootId],
  );
  return rows.map((row) => row.state);
}

beforeAll(async () => {
  const cw = engine();
  await cw.migrate();
  rootId = await submitOnDay(cw, 2, tree.name, { key: 'k1' });
  const worker = await cw.startWorker({ queues: ['q-retention-tree'], concurrency: 2 });
  await waitFor(async () => (await treeStates()).join() === 'waiting,succeeded,succeeded');
  await worker.stop();
  await cw.close();
}, 60_000);

afterAll(async () => {
  await setDatabaseClockOffset(url(), 0);
});

describe('a tree of workflows', () => {
  it('keeps finished children while their parent still moves, however old', async () => {
    const cw = engine();
    await setDatabaseClockOffset(url(), 75 * dayMs);
    const answer = await cw.purgeFinished({ ...request, olderThanMs: 30 * dayMs });
    expect(answer.workflowsRemoved).toBe(0);
    expect(await treeStates()).toEqual(['waiting', 'succeeded', 'succeeded']);
  });

  it('goes as a whole once it finished longer ago than the window', async () => {
    const cw = engine();
    const worker = await cw.startWorker({ queues: ['q-retention-tree'], concurrency: 2 });
    await cw.sendEvent('retention.tree', 'k1', { ok: true });
    await waitFor(async () => (await treeStates()).join() === 'succeeded,succeeded,succeeded');
    await worker.stop();
    await setDatabaseClockOffset(url(), 150 * dayMs);
    const answer = await cw.purgeFinished({ ...request, olderThanMs: 30 * dayMs });
    expect(answer.workflowsRemoved).toBe(3);
    expect(await treeStates()).toEqual([]);
  });
});
