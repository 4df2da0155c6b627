/**
 * `causeway tree`, `status` of a child and `workflows --parent/--root` (R48), run as child
 * processes against a server in another process running the tree of
 * test/engine/tree-workflows.ts: a root whose `spread` starts two `tree-mid`, the first with
 * three leaves (one dead, two waiting for their event), the second with one.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { treeAtRest } from '../engine/tree-waits';
import { causeway, causewayJson, submitted, useCli } from './helpers';

const { url, db } = useCli({ tree: true });

let root = '';
let mids: string[] = [];
let leaves: string[] = [];

beforeAll(async () => {
  root = await submitted(url(), 'tree-root', { groups: [[-1, 1, 2], [3]] });
  ({ mids, leaves } = await treeAtRest(db(), root));
}, 60_000);

/** The lines of a text output, their guides (│ ├─ └─) and indentation kept. */
function lines(text: string): string[] {
  return text.trimEnd().split('\n');
}

describe('causeway tree', () => {
  it('draws the tree from the root down: states, counts and blockers at every level', async () => {
    const run = await causeway(['tree', root, '--url', url()]);
    expect([run.code, run.stderr]).toEqual([0, '']);
    const text = lines(run.stdout);
    const [dead, one, two] = leaves;
    expect(text[0]).toBe(`tree-root ${root}  running`);
    expect(text.slice(1, 3)).toEqual([
      '├─ prepare  succeeded',
      '├─ spread  awaiting_children  2 children of tree-mid: 2 running',
    ]);
    // The root's blocker follows the first open child down to the leaf that holds it.
    expect(text[3]).toMatch(
      new RegExp(
        `^│  why: spread: awaiting 2 child workflows: .*tree-mid ${mids[0]}, is running: fan: .*tree-leaf ${one}, is waiting: hold: waiting for tree\\.release \\(key 1\\)`,
      ),
    );
    expect(text.slice(4, 6)).toEqual([
      `│  ├─ #0 tree-mid ${mids[0]}  running`,
      '│  │  └─ fan  awaiting_children  3 children of tree-leaf: 2 waiting, 1 dead (tolerated 1 of 2)',
    ]);
    expect(text).toContain(`│  │     ├─ #0 tree-leaf ${dead}  dead`);
    expect(text).toContain(`│  │     ├─ #1 tree-leaf ${one}  waiting`);
    expect(text).toContain(`│  │     └─ #2 tree-leaf ${two}  waiting`);
    expect(text).toContain(`│  └─ #1 tree-mid ${mids[1]}  running`);
    expect(text.filter((line) => /why: hold: waiting for tree\.release/.test(line))).toHaveLength(
      3,
    );
    expect(text.slice(-2)).toEqual([
      '└─ report  pending',
      '   why: report: waiting for upstream step spread (awaiting_children)',
    ]);
  });

  it('bounds wide and deep trees with --limit and --depth, counting what it leaves out', async () => {
    const narrow = lines(
      (await causeway(['tree', mids[0] as string, '--limit', '1', '--url', url()])).stdout,
    );
    expect(narrow.filter((line) => /#\d tree-leaf/.test(line))).toEqual([
      `   ├─ #0 tree-leaf ${leaves[0]}  dead`,
    ]);
    expect(narrow).toContain('   └─ … and 2 more');
    const shallow = lines((await causeway(['tree', root, '--depth', '1', '--url', url()])).stdout);
    expect(shallow.some((line) => /#\d tree-leaf/.test(line))).toBe(false);
    expect(shallow.filter((line) => line.includes('… and'))).toEqual([
      '│  │     └─ … and 3 more (deeper than --depth)',
      '│        └─ … and 1 more (deeper than --depth)',
    ]);
    const top = lines((await causeway(['tree', root, '--depth', '0', '--url', url()])).stdout);
    expect(top).toContain('│  └─ … and 2 more (deeper than --depth)');
  });

  it('starts at a child with the line of its parent and root', async () => {
    const run = await causeway(['tree', leaves[2] as string, '--url', url()]);
    const text = lines(run.stdout);
    expect(text[0]).toBe(
      `child #2 of tree-mid ${mids[0]} (step fan), depth 2, root tree-root ${root}`,
    );
    expect(text[1]).toBe(`tree-leaf ${leaves[2]}  waiting`);
  });

  it('--json gives the tree as data', async () => {
    const { code, json } = await causewayJson<{ tree: TreeJson }>(['tree', root, '--url', url()]);
    expect(code).toBe(0);
    const { tree } = json;
    expect([tree.id, tree.state, tree.index, tree.parent]).toEqual([root, 'RUNNING', null, null]);
    const spread = tree.steps.find((step) => step.step === 'spread');
    expect(spread?.blocker?.code).toBe('CHILDREN_PENDING');
    expect(spread?.children?.counts).toMatchObject({ step: 'spread', total: 2, unfinished: 2 });
    expect(spread?.children?.shown.map((node) => [node.index, node.id])).toEqual([
      [0, mids[0]],
      [1, mids[1]],
    ]);
    const fan = spread?.children?.shown[0]?.steps[0];
    expect(fan?.children?.shown.map((node) => [node.index, node.id, node.state])).toEqual([
      [0, leaves[0], 'DEAD'],
      [1, leaves[1], 'WAITING'],
      [2, leaves[2], 'WAITING'],
    ]);
    expect([fan?.children?.more, fan?.children?.depthLimited]).toEqual([0, false]);
  });

  it('refuses a bad --depth or --limit (exit 2) and an unknown id (exit 3)', async () => {
    for (const args of [
      ['--depth', '11'],
      ['--depth', 'x'],
      ['--limit', '0'],
      ['--limit', '101'],
    ]) {
      const run = await causeway(['tree', root, ...args, '--url', url()]);
      expect([args, run.code]).toEqual([args, 2]);
    }
    const unknown = await causeway([
      'tree',
      '01a2436d-0000-7000-8000-000000000000',
      '--url',
      url(),
    ]);
    expect(unknown.code).toBe(3);
  });
});

describe('causeway status and workflows in a tree', () => {
  it("status names a child's parent and root, and a parent's children by state", async () => {
    const run = await causeway(['status', mids[0] as string, '--url', url()]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      new RegExp(`^parent: +${root} {2}tree-root, step spread, child #0$`, 'm'),
    );
    expect(run.stdout).toMatch(new RegExp(`^root: +${root} {2}tree-root \\(depth 1\\)$`, 'm'));
    expect(run.stdout).toMatch(
      /^children of fan: +3 children of tree-leaf: 2 waiting, 1 dead \(tolerated 1 of 2\)$/m,
    );
  });

  it('workflows --parent and --root list a tree; an id that is not one is exit 2', async () => {
    type List = { workflows: { totalCount: number; edges: { node: { id: string } }[] } };
    const byParent = await causewayJson<List>([
      'workflows',
      '--parent',
      mids[0] as string,
      '--url',
      url(),
    ]);
    expect(byParent.json.workflows.edges.map((edge) => edge.node.id).sort()).toEqual(
      [...leaves].sort(),
    );
    const byRoot = await causewayJson<List>([
      'workflows',
      '--root',
      root,
      '--state',
      'dead',
      '--url',
      url(),
    ]);
    expect(byRoot.json.workflows.edges.map((edge) => edge.node.id)).toEqual([leaves[0]]);
    const bad = await causeway(['workflows', '--parent', 'nope', '--url', url()]);
    expect(bad.code).toBe(2);
  });
});

interface TreeJson {
  id: string;
  state: string;
  index: number | null;
  parent: unknown;
  steps: {
    step: string;
    state: string;
    blocker: { code: string; message: string } | null;
    children: {
      counts: Record<string, unknown>;
      shown: TreeJson[];
      more: number;
      depthLimited: boolean;
    } | null;
  }[];
}
