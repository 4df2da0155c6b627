/**
 * `/metrics` on a tree (R43–R48): the edges of child workflows are counted like every edge,
 * by (from, to, reason) — `children_started`, `children_succeeded`, the children's own edges
 * with their parent as actor — equal to the log's counts; and a step awaiting its children is
 * a live `awaiting_children` task in the state gauge, until its children finish.
 */
import { describe, expect, it } from 'vitest';
import { treeWorkflows } from '../engine/tree-workflows';
import { useTestDatabase } from '../helpers/database';
import { query } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { startApi } from './helpers';
import { parsePrometheusText, type Scrape, samplesOf, sampleValue } from './prometheus-text';

const database = useTestDatabase();
const url = () => database().url;

async function scrape(metricsUrl: string): Promise<Scrape> {
  const response = await fetch(metricsUrl);
  expect(response.status).toBe(200);
  return parsePrometheusText(await response.text());
}

/** A scrape once the log counters have counted every row written so far. */
async function caughtUp(metricsUrl: string): Promise<Scrape> {
  const [last] = await query<{ id: string | null }>(
    url(),
    'select max(id)::text as id from causeway_transitions',
  );
  return waitFor(
    async () => {
      const scraped = await scrape(metricsUrl);
      return sampleValue(scraped, 'causeway_transition_log_counted_id') >= Number(last?.id ?? 0)
        ? scraped
        : undefined;
    },
    { timeoutMs: 10_000, description: 'the log counters caught up' },
  );
}

/** Task edges as the scrape counts them and as the log holds them: from|to|reason → count. */
async function taskEdges(scraped: Scrape) {
  const counted = Object.fromEntries(
    samplesOf(scraped, 'causeway_task_transitions_total')
      .map((sample) => [
        `${sample.labels.from}|${sample.labels.to}|${sample.labels.reason}`,
        sample.value,
      ])
      .sort(),
  );
  const start = sampleValue(scraped, 'causeway_transition_log_start_id');
  const upTo = sampleValue(scraped, 'causeway_transition_log_counted_id');
  const rows = await query<{ key: string; n: number }>(
    url(),
    `select coalesce(from_state, 'none') || '|' || to_state || '|' || reason as key,
            count(*)::int as n
       from causeway_transitions
      where task_id is not null and id > $1 and id <= $2 group by 1 order by 1`,
    [start, upTo],
  );
  return { counted, logged: Object.fromEntries(rows.map((row) => [row.key, row.n])) };
}

describe('/metrics on a tree', () => {
  it('counts the children edges by reason and gauges the steps awaiting children', async () => {
    const api = await startApi(url(), {
      engine: { workflows: treeWorkflows },
      api: { metrics: { log: { intervalMs: 50 } } },
    });
    const metricsUrl = api.url.replace(/\/graphql$/, '/metrics');
    await scrape(metricsUrl);
    const worker = await api.engine.startWorker({ queues: ['q-tree'], concurrency: 8 });
    const root = (await api.engine.submit('tree-root', { groups: [[1, 2], [3]] })).workflow.id;
    await waitFor(
      async () =>
        (
          await query(
            url(),
            `select 1 from causeway_workflows
              where root_workflow_id = $1 and depth = 2 and state = 'waiting'`,
            [root],
          )
        ).length === 3,
      { timeoutMs: 15_000, description: 'three leaves waiting' },
    );
    const waiting = await caughtUp(metricsUrl);
    // The root's spread and each middle workflow's fan.
    expect(
      sampleValue(waiting, 'causeway_tasks', { state: 'awaiting_children', queue: 'q-tree' }),
    ).toBe(3);
    const started = await taskEdges(waiting);
    expect(started.counted).toEqual(started.logged);
    expect(started.counted['leased|awaiting_children|children_started']).toBe(3);

    for (const n of [1, 2, 3]) await api.engine.sendEvent('tree.release', String(n), { n });
    await waitFor(async () => (await api.engine.getWorkflow(root))?.state === 'succeeded', {
      timeoutMs: 15_000,
      description: 'the root succeeded',
    });
    await worker.stop();
    const done = await caughtUp(metricsUrl);
    const settled = await taskEdges(done);
    expect(settled.counted).toEqual(settled.logged);
    expect(settled.counted['awaiting_children|succeeded|children_succeeded']).toBe(3);
    expect(
      samplesOf(done, 'causeway_tasks').filter(
        (sample) => sample.labels.state === 'awaiting_children',
      ),
    ).toEqual([]);
  });
});
