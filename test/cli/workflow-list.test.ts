/**
 * `causeway workflows`, run as a child process against a server in another process: what ran
 * lately, newest first, filtered by state and name, paged by the cursor it prints, and its
 * `--json` shape and exit codes.
 */
import { describe, expect, it } from 'vitest';
import { causeway, causewayJson, submitted, useCli, workflowReaches } from './helpers';

const { url, db } = useCli();

interface ListJson {
  workflows: {
    totalCount: number;
    totalCountCapped: boolean;
    edges: { cursor: string; node: { id: string; name: string; state: string } }[];
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
  };
}

describe('causeway workflows', () => {
  it('lists what ran lately, newest first, dead or queued; filters; pages with the cursor it prints', async () => {
    const finished = await submitted(url(), 'doomed', { label: 'list-finished' });
    await workflowReaches(db(), finished, 'dead');
    const stranded = await submitted(url(), 'cli-stranded', { label: 'list-stranded' });

    const text = await causeway(['workflows', '--url', url()]);
    expect(text.code).toBe(0);
    const lines = text.stdout.split('\n');
    expect(lines[0]).toMatch(/^WORKFLOW\s{2,}NAME\s{2,}STATE\s{2,}CREATED\s{2,}UPDATED$/);
    expect(lines[1]).toMatch(new RegExp(`^${stranded}\\s{2,}cli-stranded\\s{2,}queued\\s{2,}`));
    expect(lines[2]).toMatch(new RegExp(`^${finished}\\s{2,}doomed\\s{2,}dead\\s{2,}`));
    expect(text.stdout).toMatch(/\n2 of 2\n$/);

    const oldest = await causewayJson<ListJson>(['workflows', '--order', 'oldest', '--url', url()]);
    expect(oldest.code).toBe(0);
    expect(oldest.json.workflows.edges.map((edge) => edge.node.id)).toEqual([finished, stranded]);
    expect(oldest.json.workflows).toMatchObject({ totalCount: 2, totalCountCapped: false });

    const queued = await causewayJson<ListJson>([
      'workflows',
      '--state',
      'queued,dead',
      '--name',
      'cli-stranded',
      '--url',
      url(),
    ]);
    expect(queued.json.workflows.edges.map((edge) => edge.node.id)).toEqual([stranded]);
    // The on-call view.
    const onCall = await causewayJson<ListJson>([
      'workflows',
      '--state',
      'dead,cancel_requested',
      '--url',
      url(),
    ]);
    expect(onCall.json.workflows.edges.map((edge) => edge.node.id)).toEqual([finished]);

    const first = await causeway(['workflows', '--first', '1', '--url', url()]);
    const next = / next page: --after (\S+)$/m.exec(first.stdout)?.[1];
    expect(first.stdout).toContain('1 of 2');
    expect(next).toBeDefined();
    const second = await causewayJson<ListJson>([
      'workflows',
      '--first',
      '1',
      '--after',
      next as string,
      '--url',
      url(),
    ]);
    expect(second.json.workflows.edges.map((edge) => edge.node.id)).toEqual([finished]);
    expect(second.json.workflows.pageInfo.hasNextPage).toBe(false);

    // A cursor of the newest-first order is refused by the other order.
    const crossed = await causewayJson<{ error: { code: string; exitCode: number } }>([
      'workflows',
      '--order',
      'oldest',
      '--after',
      next as string,
      '--url',
      url(),
    ]);
    expect(crossed.code).toBe(2);
    expect(crossed.json.error).toMatchObject({ code: 'BAD_USER_INPUT', exitCode: 2 });
  }, 60_000);

  it('refuses an unknown state, order or page size with exit 2', async () => {
    for (const args of [
      ['--state', 'finished'],
      ['--order', 'sideways'],
      ['--first', 'ten'],
    ]) {
      const run = await causewayJson<{ error: { kind: string } }>([
        'workflows',
        ...args,
        '--url',
        url(),
      ]);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.json.error.kind).toBe('usage');
    }
  });
});
