/**
 * The tree the tests of R48 read (engine, API, CLI, dashboard): `tree-root` runs `prepare`, then
 * `spread` starts one `tree-mid` per group, then `report`; each `tree-mid` starts one
 * `tree-leaf` per number (tolerating two failures); a leaf fails at once for a negative number,
 * else waits for the event `tree.release` keyed by its number (its payload is its result).
 * `tree-launcher` starts two leaves detached. All run on queue `q-tree`.
 */
import { startChildren, workflow } from '@causeway/workflow';
import { z } from 'zod';

/** A leaf: fails at once for a negative number, else waits for `tree.release` keyed by it. */
export const treeLeaf = workflow({ name: 'tree-leaf', input: z.object({ n: z.number() }) })
  .step('check', {
    queue: 'q-tree',
    maxAttempts: 1,
    run: (ctx) => {
      if (ctx.input.n < 0) throw new Error(`no leaf for ${ctx.input.n}`);
      return ctx.input.n;
    },
  })
  .event('hold', {
    after: ['check'],
    name: 'tree.release',
    key: (ctx) => String(ctx.input.n),
    timeoutMs: 600_000,
  })
  .build();

export const treeMiddle = workflow({
  name: 'tree-mid',
  input: z.object({ ns: z.array(z.number()) }),
})
  .step('fan', {
    queue: 'q-tree',
    run: (ctx) =>
      startChildren(
        treeLeaf,
        ctx.input.ns.map((n) => ({ n })),
        { tolerate: { failures: 2 } },
      ),
  })
  .build();

export const treeRoot = workflow({
  name: 'tree-root',
  input: z.object({ groups: z.array(z.array(z.number())) }),
})
  .step('prepare', { queue: 'q-tree', run: () => 'ready' })
  .step('spread', {
    after: ['prepare'],
    queue: 'q-tree',
    run: (ctx) =>
      startChildren(
        treeMiddle,
        ctx.input.groups.map((ns) => ({ ns: [...ns] })),
      ),
  })
  .step('report', {
    after: ['spread'],
    queue: 'q-tree',
    run: (ctx) => `${(ctx.results.spread as unknown[]).length} groups`,
  })
  .build();

export const treeLauncher = workflow({ name: 'tree-launcher', input: z.object({}) })
  .step('fire', {
    queue: 'q-tree',
    run: () => startChildren(treeLeaf, [{ n: 901 }, { n: 902 }], { detached: true }),
  })
  .build();

/** Every definition of the tree's tests. */
export const treeWorkflows = [treeLeaf, treeMiddle, treeRoot, treeLauncher];
