/**
 * `/metrics` after a known run, on a real server over real HTTP and real PostgreSQL: the
 * scrape is parsed (./prometheus-text.ts) and its numbers are held to the database's own:
 * - the edge counters equal the transition log's counts by (from, to, reason) over the window
 *   the scrape says it counted (from the log's end at server start, so rows written before it
 *   are not counted), for task rows and workflow rows;
 * - each time-in-state histogram (count, sum and every bucket) equals the edges leaving that
 *   state, timed against the previous row of the same task with a window function;
 * - the live gauges equal live counts, their ages lie between ages read before and after;
 * - the handler durations count exactly the handler runs, by workflow, step and outcome;
 * - and the counters go on counting rows written after the first scrape.
 */
import { metricDefinitions } from '@causeway/api';
import type { Channel } from '@causeway/engine';
import { defineWorkflow, StepError, send, step, workflow } from '@causeway/workflow';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { startApi } from './helpers';
import { parsePrometheusText, type Scrape, samplesOf, sampleValue } from './prometheus-text';

const database = useTestDatabase();
const url = () => database().url;
const hour = 3_600_000;

/** Handler runs as the handlers themselves saw them: workflow|step|outcome → runs. */
const runs = new Map<string, number>();
const ran = (workflowName: string, stepName: string, outcome: string) => {
  const key = `${workflowName}|${stepName}|${outcome}`;
  runs.set(key, (runs.get(key) ?? 0) + 1);
};

let releaseHold: () => void = () => undefined;
const held = new Promise<void>((resolve) => {
  releaseHold = resolve;
});

const flaky = defineWorkflow({
  name: 'm-flaky',
  input: z.object({ n: z.number() }),
  steps: {
    first: step({
      maxAttempts: 3,
      backoff: { initialIntervalMs: 1, maximumIntervalMs: 5 },
      run: (ctx) => {
        if (ctx.attempt === 1) {
          ran('m-flaky', 'first', 'failed');
          throw new StepError('unavailable', 'not yet');
        }
        ran('m-flaky', 'first', 'completed');
        return { attempt: ctx.attempt };
      },
    }),
    second: step({
      after: ['first'],
      run: () => {
        ran('m-flaky', 'second', 'completed');
        return null;
      },
    }),
  },
});
const doomed = defineWorkflow({
  name: 'm-dead',
  input: z.object({ n: z.number() }),
  steps: {
    only: step({
      run: () => {
        ran('m-dead', 'only', 'failed');
        throw new StepError('invalid_argument', 'this input never works');
      },
    }),
  },
});
const ok = defineWorkflow({
  name: 'm-ok',
  input: z.object({ n: z.number() }),
  steps: {
    only: step({
      run: () => {
        ran('m-ok', 'only', 'completed');
        return { done: true };
      },
    }),
  },
});
/** Holds its lease until the test lets it go. */
const hold = defineWorkflow({
  name: 'm-hold',
  input: z.object({ n: z.number() }),
  steps: {
    hold: step({
      queue: 'hold',
      run: async (ctx) => {
        await Promise.race([
          held,
          new Promise((resolve) => ctx.signal.addEventListener('abort', resolve)),
        ]);
        return null;
      },
    }),
  },
});
/** Waits for an event; its second step is pending behind it. */
const approval = workflow({ name: 'm-wait', input: z.object({ id: z.string() }) })
  .event('approval', { name: 'm.approval', key: (ctx) => ctx.input.id, timeoutMs: 24 * hour })
  .step('after', {
    after: ['approval'],
    run: () => {
      ran('m-wait', 'after', 'completed');
      return null;
    },
  })
  .build();
/** On a queue no worker serves: ready and never claimed. */
const unserved = defineWorkflow({
  name: 'm-unserved',
  input: z.object({ n: z.number() }),
  steps: { only: step({ queue: 'unserved', run: () => null }) },
});
/** Sends to a channel that is down for an hour: awaiting its receipt, the message pending. */
const sender = defineWorkflow({
  name: 'm-send',
  input: z.object({ n: z.number() }),
  steps: {
    only: step<{ n: number }>({
      run: (ctx) => {
        ran('m-send', 'only', 'sent');
        return send('stuck', { n: ctx.input.n });
      },
    }),
  },
});
let deliveries = 0;
const stuck: Channel = {
  name: 'stuck',
  async deliver() {
    deliveries += 1;
    return { kind: 'retry', category: 'unavailable', message: 'down', retryAfterMs: hour };
  },
};
const workflows = [flaky, doomed, ok, hold, approval, unserved, sender];

async function scrape(metricsUrl: string): Promise<Scrape> {
  const response = await fetch(metricsUrl);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain; version=0.0.4');
  return parsePrometheusText(await response.text());
}

const lastLogId = async () =>
  Number(
    (await query<{ id: string | null }>(url(), 'select max(id) as id from causeway_transitions'))[0]
      ?.id ?? 0,
  );

/** A scrape once the log counters have counted every row written so far. */
async function scrapeCaughtUp(metricsUrl: string): Promise<Scrape> {
  const last = await lastLogId();
  return waitFor(
    async () => {
      const scraped = await scrape(metricsUrl);
      return sampleValue(scraped, 'causeway_transition_log_counted_id') >= last && scraped;
    },
    { timeoutMs: 10_000, description: `the log counters reaching id ${last}` },
  );
}

type Counts = Record<string, number>;
const sortedCounts = (entries: [string, number][]): Counts =>
  Object.fromEntries(entries.filter(([, n]) => n > 0).sort(([a], [b]) => a.localeCompare(b)));

/** The samples of `causeway_task_<suffix>` and `causeway_workflow_<suffix>`: kind|labels… → value. */
function byKind(scraped: Scrape, suffix: string, labels: readonly string[]): Counts {
  return sortedCounts(
    (['task', 'workflow'] as const).flatMap((kind) =>
      samplesOf(scraped, `causeway_${kind}_${suffix}`).map((sample): [string, number] => [
        [kind, ...labels.map((label) => sample.labels[label])].join('|'),
        sample.value,
      ]),
    ),
  );
}

/** The edge counters of a scrape: kind|from|to|reason → count. */
const scrapedEdges = (scraped: Scrape) =>
  byKind(scraped, 'transitions_total', ['from', 'to', 'reason']);

/** The log's own counts over (after, upTo]. */
async function loggedEdges(after: number, upTo: number): Promise<Counts> {
  const rows = await query<{ key: string; n: number }>(
    url(),
    `select (case when task_id is null then 'workflow' else 'task' end) || '|' ||
            coalesce(from_state, 'none') || '|' || to_state || '|' || reason as key,
            count(*)::int as n
       from causeway_transitions where id > $1 and id <= $2 group by 1`,
    [after, upTo],
  );
  return sortedCounts(rows.map((row) => [row.key, row.n]));
}

/** Each edge of (after, upTo] that leaves a state, with the seconds since the one entering it. */
async function loggedTimesInState(after: number, upTo: number) {
  return query<{ kind: string; state: string; reason: string; seconds: number }>(
    url(),
    `select kind, state, reason, seconds from (
       select case when task_id is null then 'workflow' else 'task' end as kind, id,
              from_state as state, reason,
              extract(epoch from at - lag(at) over (partition by workflow_id, task_id order by id))::float8 as seconds
         from causeway_transitions) as timed
      where id > $1 and id <= $2 and state is not null`,
    [after, upTo],
  );
}

async function expectHistogramsMatchLog(scraped: Scrape, after: number, upTo: number) {
  const timed = await loggedTimesInState(after, upTo);
  const groups = new Map<string, number[]>();
  for (const row of timed) {
    const key = `${row.kind}|${row.state}|${row.reason}`;
    groups.set(key, [...(groups.get(key) ?? []), Math.max(0, row.seconds)]);
  }
  const scrapedCounts = byKind(scraped, 'time_in_state_seconds_count', ['state', 'reason']);
  expect(scrapedCounts).toEqual(sortedCounts([...groups].map(([key, list]) => [key, list.length])));
  expect(groups.size).toBeGreaterThan(5);
  for (const [key, seconds] of groups) {
    const [kind, state, reason] = key.split('|') as [string, string, string];
    const name = `causeway_${kind}_time_in_state_seconds`;
    const labels = { state, reason };
    const sum = seconds.reduce((total, value) => total + value, 0);
    expect(sampleValue(scraped, `${name}_sum`, labels)).toBeCloseTo(sum, 6);
    const buckets = samplesOf(scraped, `${name}_bucket`, labels);
    expect(buckets.length).toBeGreaterThan(20);
    for (const bucket of buckets) {
      const bound = Number(
        bucket.labels.le === '+Inf' ? Number.POSITIVE_INFINITY : bucket.labels.le,
      );
      expect(bucket.value, `${key} le=${bucket.labels.le}`).toBe(
        seconds.filter((value) => value <= bound).length,
      );
    }
  }
}

/** One number per row of a query, keyed by its labels. */
async function liveCounts(text: string): Promise<Counts> {
  const rows = await query<{ key: string; n: number }>(url(), text);
  return sortedCounts(rows.map((row) => [row.key, row.n]));
}
const scrapedGauge = (
  scraped: Scrape,
  name: string,
  key: (labels: Record<string, string>) => string,
) => sortedCounts(samplesOf(scraped, name).map((sample) => [key(sample.labels), sample.value]));

describe('/metrics after a known run', () => {
  it('counts what the log holds, shows the live rows, and times every handler run', async () => {
    // Rows written before the server starts are history the counters do not count.
    const before = testEngine(url(), { workflows });
    await before.migrate();
    const early = await before.submit('m-ok', { n: 0 });
    const earlyWorker = await before.startWorker({ concurrency: 1, queues: ['default'] });
    await waitFor(async () => (await before.getWorkflow(early.workflow.id))?.state === 'succeeded');
    await earlyWorker.stop();
    await before.close();
    const historyEnd = await lastLogId();
    expect(historyEnd).toBeGreaterThan(0);
    runs.clear();

    const api = await startApi(url(), {
      // A long lease: the held task stays leased however slow the machine renews it.
      engine: { workflows, channels: [stuck], leaseMs: 30_000 },
      api: { metrics: { log: { intervalMs: 50 } } },
    });
    const metricsUrl = api.url.replace(/\/graphql$/, '/metrics');
    const { engine } = api;
    try {
      const first = await scrape(metricsUrl);
      // Every defined metric, and nothing else, with its type and help.
      expect([...first.families.values()]).toEqual(
        Object.values(metricDefinitions).map(({ name, type, help }) => ({ name, type, help })),
      );
      expect(sampleValue(first, 'causeway_transition_log_start_id')).toBe(historyEnd);
      expect(samplesOf(first, 'causeway_task_transitions_total')).toEqual([]);

      const ids = await Promise.all([
        engine.submit('m-flaky', { n: 1 }),
        engine.submit('m-flaky', { n: 2 }),
        engine.submit('m-dead', { n: 1 }),
        engine.submit('m-ok', { n: 1 }),
        engine.submit('m-ok', { n: 2 }),
        engine.submit('m-ok', { n: 3 }, { delayMs: hour }),
        engine.submit('m-hold', { n: 1 }),
        engine.submit('m-wait', { id: 'w1' }),
        engine.submit('m-unserved', { n: 1 }),
        engine.submit('m-send', { n: 1 }),
      ]).then((results) => results.map((result) => result.workflow.id));
      const worker = await engine.startWorker({
        concurrency: { default: 4, hold: 1 },
        queues: ['default', 'hold'],
      });
      await waitFor(
        async () => {
          const states = await query<{ state: string }>(
            url(),
            'select state from causeway_workflows where id = any($1::uuid[])',
            [ids],
          );
          const tasks = await query<{ step: string; state: string }>(
            url(),
            'select step, state from causeway_tasks where workflow_id = any($1::uuid[])',
            [ids],
          );
          const has = (stepName: string, state: string) =>
            tasks.some((task) => task.step === stepName && task.state === state);
          return (
            states.filter((row) => row.state === 'succeeded').length === 4 &&
            states.filter((row) => row.state === 'dead').length === 1 &&
            has('hold', 'leased') &&
            has('approval', 'waiting') &&
            has('after', 'pending') &&
            has('only', 'awaiting_receipt') &&
            deliveries >= 1
          );
        },
        { timeoutMs: 15_000, description: 'the workload settling' },
      );

      const liveTasks = () =>
        liveCounts(
          `select state || '|' || queue as key, count(*)::int as n from causeway_tasks
            where state not in ('succeeded', 'cancelled', 'dead') group by 1`,
        );
      const oldestInState = () =>
        query<{ state: string; queue: string; seconds: number }>(
          url(),
          `select state, queue, extract(epoch from causeway_now() - min(updated_at))::float8 as seconds
             from causeway_tasks where state not in ('succeeded', 'cancelled', 'dead')
            group by state, queue`,
        );
      const tasksBefore = await liveTasks();
      const agesBefore = await oldestInState();
      const scraped = await scrapeCaughtUp(metricsUrl);
      const agesAfter = await oldestInState();
      expect(await liveTasks()).toEqual(tasksBefore);

      // The counters: exactly the log's rows after the start, up to what the scrape counted.
      const counted = sampleValue(scraped, 'causeway_transition_log_counted_id');
      expect(counted).toBe(await lastLogId());
      const edges = scrapedEdges(scraped);
      expect(edges).toEqual(await loggedEdges(historyEnd, counted));
      expect(edges['task|leased|queued|retry_scheduled']).toBe(2);
      expect(edges['task|leased|dead|non_retryable_error']).toBe(1);
      expect(edges['task|none|queued|submitted']).toBeGreaterThan(0);
      await expectHistogramsMatchLog(scraped, historyEnd, counted);

      // The live gauges: the database's live counts and ages.
      expect(scrapedGauge(scraped, 'causeway_tasks', (l) => `${l.state}|${l.queue}`)).toEqual(
        tasksBefore,
      );
      expect(tasksBefore).toMatchObject({
        'leased|hold': 1,
        'waiting|default': 1,
        'pending|default': 1,
        'awaiting_receipt|default': 1,
        'queued|default': 1,
        'queued|unserved': 1,
      });
      for (const before of agesBefore) {
        const after = agesAfter.find(
          (row) => row.state === before.state && row.queue === before.queue,
        );
        const value = sampleValue(scraped, 'causeway_task_oldest_in_state_seconds', {
          state: before.state,
          queue: before.queue,
        });
        expect(value).toBeGreaterThanOrEqual(before.seconds);
        expect(value).toBeLessThanOrEqual(after?.seconds ?? Number.NaN);
      }
      expect(scrapedGauge(scraped, 'causeway_ready_tasks', (l) => l.queue as string)).toEqual(
        await liveCounts(
          `select queue as key, count(*)::int as n from causeway_tasks
            where state = 'queued' and run_at <= causeway_now() group by 1`,
        ),
      );
      expect(sampleValue(scraped, 'causeway_ready_tasks', { queue: 'unserved' })).toBe(1);
      expect(samplesOf(scraped, 'causeway_ready_tasks', { queue: 'default' })).toEqual([]);
      expect(
        sampleValue(scraped, 'causeway_ready_oldest_age_seconds', { queue: 'unserved' }),
      ).toBeGreaterThan(0);
      expect(scrapedGauge(scraped, 'causeway_leases', (l) => l.holder as string)).toEqual({
        [engine.holder]: 1,
      });
      const expiry = sampleValue(scraped, 'causeway_lease_next_expiry_seconds', {
        holder: engine.holder,
      });
      expect(expiry).toBeGreaterThan(0);
      expect(expiry).toBeLessThanOrEqual(30); // the 30 s lease, renewed
      expect(
        sampleValue(scraped, 'causeway_lease_oldest_age_seconds', { holder: engine.holder }),
      ).toBe(
        sampleValue(scraped, 'causeway_task_oldest_in_state_seconds', {
          state: 'leased',
          queue: 'hold',
        }),
      );
      expect(
        scrapedGauge(scraped, 'causeway_outbox_pending_messages', (l) => l.channel as string),
      ).toEqual({ stuck: 1 });
      expect(
        scrapedGauge(scraped, 'causeway_event_waiting_tasks', (l) => l.event as string),
      ).toEqual({
        'm.approval': 1,
      });
      expect(
        sampleValue(scraped, 'causeway_event_wait_oldest_age_seconds', { event: 'm.approval' }),
      ).toBe(
        sampleValue(scraped, 'causeway_task_oldest_in_state_seconds', {
          state: 'waiting',
          queue: 'default',
        }),
      );

      // The worker registry: this engine's row, with what its worker serves.
      const registered = await query<{ n: number }>(
        url(),
        'select count(*)::int as n from causeway_workers where stale_at > causeway_now()',
      );
      expect(sampleValue(scraped, 'causeway_workers')).toBe(registered[0]?.n);
      expect(sampleValue(scraped, 'causeway_workers')).toBe(1);
      expect(scrapedGauge(scraped, 'causeway_queue_slots', (l) => l.queue as string)).toEqual({
        default: 4,
        hold: 1,
      });
      expect(scrapedGauge(scraped, 'causeway_queue_workers', (l) => l.queue as string)).toEqual({
        default: 1,
        hold: 1,
      });

      // Handler runs: the handlers' own count, by workflow, step and outcome.
      const timedRuns = sortedCounts(
        samplesOf(scraped, 'causeway_handler_duration_seconds_count').map((sample) => [
          `${sample.labels.workflow}|${sample.labels.step}|${sample.labels.outcome}`,
          sample.value,
        ]),
      );
      expect(timedRuns).toEqual(sortedCounts([...runs]));
      expect(timedRuns).toMatchObject({ 'm-flaky|first|failed': 2, 'm-send|only|sent': 1 });

      // Rows written after a scrape are counted by the next one.
      await engine.sendEvent('m.approval', 'w1', {});
      await waitFor(
        async () =>
          (
            await query<{ state: string }>(
              url(),
              'select state from causeway_workflows where id = $1',
              [ids[7]],
            )
          )[0]?.state === 'succeeded',
      );
      const later = await scrapeCaughtUp(metricsUrl);
      const laterCounted = sampleValue(later, 'causeway_transition_log_counted_id');
      expect(laterCounted).toBeGreaterThan(counted);
      expect(scrapedEdges(later)).toEqual(await loggedEdges(historyEnd, laterCounted));
      await expectHistogramsMatchLog(later, historyEnd, laterCounted);
      expect(samplesOf(later, 'causeway_event_waiting_tasks')).toEqual([]);
      releaseHold();
      await worker.stop();
    } finally {
      releaseHold();
    }
  });
});
