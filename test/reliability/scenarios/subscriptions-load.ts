/**
 * Subscriptions under load (issue 19 §1): while worker processes run the load (and some are
 * killed), GraphQL subscriptions over graphql-ws follow single workflows. A watcher that stays
 * connected gets every transition of its workflow, in order, none missing, none twice, equal
 * to the transitions query; a watcher that disconnects mid-run (its client closed) and
 * resubscribes with `after: <last id seen>` ends with exactly the log too.
 */
import { performance } from 'node:perf_hooks';
import { expect } from 'vitest';
import { data, startApi, wsClient, wsSubscribe } from '../../api/helpers';
import { query } from '../../helpers/engine';
import { waitFor } from '../../helpers/wait-for';
import { goEvent } from '../fixtures/load-workflows';
import { drainWithin } from '../support/drain';
import { type FaultCounts, injectFaults } from '../support/fault-injector';
import { assertInvariants, type InvariantCounts } from '../support/invariants';
import { driveLoad, type LoadShape, startLoadRig } from '../support/load-driver';

export interface SubscriptionsLoadConfig extends LoadShape {
  readonly workers: number;
  readonly concurrency: number;
  readonly leaseMs: number;
  /** Watchers that stay connected (each on a three-step workflow). */
  readonly watched: number;
  /** Watchers that disconnect mid-run and resume (each on an event-waiting workflow). */
  readonly resumed: number;
  readonly killEveryMs: number;
  /** How long a watcher may wait for its workflow's last row. */
  readonly watchTimeoutMs: number;
  readonly livenessBoundMs: number;
  readonly seed: number;
}

export interface SubscriptionsLoadResult {
  readonly submitted: number;
  readonly watched: number;
  readonly resumed: number;
  /** Transitions delivered to watchers (all equal to the log). */
  readonly rowsDelivered: number;
  /** Rows the resumed watchers got after reconnecting. */
  readonly rowsAfterResume: number;
  readonly faults: FaultCounts;
  readonly drainMs: number;
  readonly invariants: InvariantCounts;
}

const fields =
  'id workflowId taskId step from to reason errorCategory errorSummary actor attempt at detail';
const subscription = `subscription($workflowId: ID, $after: ID) {
  transitions(workflowId: $workflowId, after: $after) { ${fields} }
}`;
interface Row {
  readonly id: string;
  readonly workflowId: string;
  readonly step: string | null;
  readonly to: string;
  readonly reason: string;
}
type Event = { transitions: Row };

const finished = (rows: readonly Row[]) =>
  rows.some((row) => row.step === null && ['SUCCEEDED', 'DEAD', 'CANCELLED'].includes(row.to));

async function logOf(url: string, id: string): Promise<Row[]> {
  const result = await data<{ workflow: { transitions: Row[] } }>(
    url,
    `query($id: ID!) { workflow(id: $id) { transitions { ${fields} } } }`,
    { variables: { id } },
  );
  return result.workflow.transitions;
}

/** Rows in strictly increasing id order, each once, all of `workflowId`. */
function expectOrderedOnce(rows: readonly Row[], workflowId: string): void {
  const ids = rows.map((row) => BigInt(row.id));
  expect(ids.every((id, index) => index === 0 || id > (ids[index - 1] as bigint))).toBe(true);
  expect(rows.every((row) => row.workflowId === workflowId)).toBe(true);
}

export async function runSubscriptionsLoad(
  databaseUrl: string,
  config: SubscriptionsLoadConfig,
): Promise<SubscriptionsLoadResult> {
  const { engine, platform, pool } = await startLoadRig(databaseUrl, config);
  try {
    const api = await startApi(databaseUrl, {
      engineInstance: engine,
      api: { workflows: [...engine.definitions.values()] },
    });
    const faults = injectFaults(pool, {
      killEveryMs: config.killEveryMs,
      pauseEveryMs: config.killEveryMs,
      pauseMs: [500, config.leaseMs * 2],
      leaseMs: config.leaseMs,
      seed: config.seed,
    });
    const load = driveLoad(databaseUrl, engine, config, {
      check: () => pool.assertNoCrash(),
    });
    // The watched workflows start once the load is under way.
    await new Promise((resolve) => setTimeout(resolve, 2 * config.batchPauseMs));

    const watchers = await Promise.all(
      Array.from({ length: config.watched }, async (_, index) => {
        const { workflow } = await engine.submit('rel-three', { n: 1_000_000 + index });
        const stream = wsSubscribe<Event>(wsClient(api.wsUrl), subscription, {
          workflowId: workflow.id,
          after: '0',
        });
        return { id: workflow.id, stream };
      }),
    );
    const resumedRuns = await Promise.all(
      Array.from({ length: config.resumed }, (_, index) =>
        watchAcrossReconnect(databaseUrl, api.wsUrl, engine, `sub-${index}`, config.watchTimeoutMs),
      ),
    );

    let rowsDelivered = 0;
    for (const watcher of watchers) {
      const rows = () => watcher.stream.items.map((item) => item.transitions);
      await waitFor(() => finished(rows()), {
        timeoutMs: config.watchTimeoutMs,
        intervalMs: 50,
        description: `the last row of watched workflow ${watcher.id}`,
      });
      watcher.stream.stop();
      expect(watcher.stream.errors).toEqual([]);
      expectOrderedOnce(rows(), watcher.id);
      expect(rows()).toEqual(await logOf(api.url, watcher.id));
      rowsDelivered += rows().length;
    }
    for (const run of resumedRuns) {
      const log = await logOf(api.url, run.id);
      expect([...run.before, ...run.after]).toEqual(log);
      expectOrderedOnce([...run.before, ...run.after], run.id);
      rowsDelivered += log.length;
    }

    const { submitted } = await load;
    const faultsEnd = performance.now();
    const faultCounts = await faults.stop();
    const drainMs = await drainWithin(databaseUrl, faultsEnd, config.livenessBoundMs, {
      check: () => pool.assertNoCrash(),
    });
    await pool.stop();
    const stats = platform.stats();
    const invariants = await assertInvariants({
      databaseUrl,
      submitted: [
        ...submitted,
        ...watchers.map((watcher) => watcher.id),
        ...resumedRuns.map((run) => run.id),
      ],
      ledger: true,
      effects: [...stats.posts, ...stats.assets],
    });
    return {
      submitted: submitted.length,
      watched: watchers.length,
      resumed: resumedRuns.length,
      rowsDelivered,
      rowsAfterResume: resumedRuns.reduce((sum, run) => sum + run.after.length, 0),
      faults: faultCounts,
      drainMs: Math.round(drainMs),
      invariants,
    };
  } finally {
    await platform.close();
  }
}

/**
 * One event-waiting workflow followed across a disconnect: subscribe from the start, close the
 * client once it waits, send its event (the rest of the run happens while nobody listens), then
 * resubscribe on a new connection with the last id seen until the last row.
 */
async function watchAcrossReconnect(
  databaseUrl: string,
  wsUrl: string,
  engine: Awaited<ReturnType<typeof startLoadRig>>['engine'],
  key: string,
  timeoutMs: number,
): Promise<{ id: string; before: Row[]; after: Row[] }> {
  const { workflow } = await engine.submit('rel-wait', { id: key });
  const firstClient = wsClient(wsUrl);
  const first = wsSubscribe<Event>(firstClient, subscription, {
    workflowId: workflow.id,
    after: '0',
  });
  const rows = (stream: typeof first) => stream.items.map((item) => item.transitions);
  await waitFor(() => rows(first).some((row) => row.to === 'WAITING'), {
    timeoutMs,
    description: `the waiting row of ${workflow.id}`,
  });
  // A real disconnect mid-run (the socket closes, not only the operation); the event is sent
  // while nobody listens, so the rest of the run happens unseen.
  await firstClient.dispose();
  const before = rows(first);
  expect(first.errors).toEqual([]);
  const lastId = before.at(-1)?.id as string;
  await engine.sendEvent(goEvent, key, { key }, { idempotencyKey: key });
  const second = wsSubscribe<Event>(wsClient(wsUrl), subscription, {
    workflowId: workflow.id,
    after: lastId,
  });
  await waitFor(() => finished([...before, ...rows(second)]), {
    timeoutMs,
    intervalMs: 50,
    description: `the last row of ${workflow.id} after the reconnect`,
  }).catch(async (error: unknown) => {
    // What the log holds beside what arrived: a stuck run and a lost row look different.
    const log = await query<{ id: string; step: string | null; reason: string }>(
      databaseUrl,
      'select id, step, reason from causeway_transitions where workflow_id = $1 order by id',
      [workflow.id],
    );
    throw new Error(
      `${String(error)}\nlast id before: ${lastId}; after the reconnect: ${JSON.stringify(rows(second).map((row) => `${row.id}:${row.step}:${row.reason}`))}; errors ${JSON.stringify(second.errors)}\nlog: ${JSON.stringify(log.map((row) => `${row.id}:${row.step}:${row.reason}`))}`,
    );
  });
  second.stop();
  expect(second.errors).toEqual([]);
  return { id: workflow.id, before, after: rows(second) };
}
