/**
 * `causeway purge` as a child process against a server in another process: a dry run counts
 * and writes nothing, a real run removes (a version no worker serves too) and is recorded, a
 * bad age or a missing reason is a usage error (exit 2) that changes nothing.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { storedCounts } from '../engine/retention-support';
import { query, setDatabaseClockOffset } from '../helpers/engine';
import { causeway, causewayJson, submitted, useCli, workflowReaches } from './helpers';

const { url, db, asAlice } = useCli();
const dayMs = 24 * 3_600_000;

afterAll(async () => {
  await setDatabaseClockOffset(db(), 0);
});

describe('causeway purge', () => {
  it('counts in a dry run, then removes what finished long enough ago, as the operator', async () => {
    const workflowId = await submitted(url(), 'doomed', { label: 'purge-1' });
    await workflowReaches(db(), workflowId, 'dead');
    // Twenty days on, a ten-day age: today's partition is old enough, and its only workflow is.
    await setDatabaseClockOffset(db(), 20 * dayMs);
    // A version a worker of another deploy served once; none serves it now, nothing records it.
    await query(
      db(),
      `insert into causeway_workflow_versions (name, version, first_served_at, last_served_at)
       values ('cli-retired', 'v0', now(), now())`,
    );
    const versions = () =>
      query(db(), 'select name, version from causeway_workflow_versions order by name, version');
    const versionsBefore = await versions();
    const before = await storedCounts(db());

    for (const args of [
      ['purge', '--older-than', '10 days', '--reason', 'tidy'],
      ['purge', '--older-than', '-1d', '--reason', 'tidy'],
      ['purge', '--older-than', '10d'],
    ]) {
      const refused = await causewayJson<{ error: { code: string; exitCode: number } }>([
        ...args,
        ...asAlice(),
      ]);
      expect(refused.code, args.join(' ')).toBe(2);
      expect(refused.json.error).toMatchObject({ code: 'USAGE', exitCode: 2 });
    }
    expect(await storedCounts(db())).toEqual(before);

    const dry = await causewayJson<{ purgeFinished: Record<string, unknown> }>([
      'purge',
      '--older-than',
      '10d',
      '--dry-run',
      '--reason',
      'see first',
      ...asAlice(),
    ]);
    expect(dry.code).toBe(0);
    expect(dry.json.purgeFinished).toMatchObject({
      dryRun: true,
      workflowsRemoved: 1,
      runId: null,
    });
    expect(await storedCounts(db())).toEqual(before);
    expect(await versions()).toEqual(versionsBefore);

    const real = await causeway(['purge', '--older-than', '10d', '--reason', 'tidy', ...asAlice()]);
    expect(real.code).toBe(0);
    expect(real.stdout).toMatch(
      /^removed 1 workflows, 1 tasks, \d+ log rows, 0 events, 0 event deliveries, 1 versions \(finished/,
    );
    // The server's worker serves every other version: only the retired one went.
    expect(await versions()).toEqual(versionsBefore.filter((row) => row.name !== 'cli-retired'));
    expect(versionsBefore.length).toBeGreaterThan(1);
    expect(real.stdout).toContain('dropped causeway_transitions_initial');
    expect(
      await query(db(), 'select id from causeway_workflows where id = $1', [workflowId]),
    ).toEqual([]);
    const runs = await query(db(), 'select operator, reason from causeway_retention_runs');
    expect(runs).toEqual([{ operator: 'alice', reason: 'tidy' }]);
  });
});
