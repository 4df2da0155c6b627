import { now, sleep } from '../clock';
import { latencyStats } from '../stats';
import { go, spawnWorkers, stopWorkers } from '../workers';
import { type Measurement, type RunContext, waitForDatabase } from './context';

/**
 * W3: pickup latency. One worker process (concurrency as configured) handles a warm-up
 * workflow and then sits idle for 500 ms; this process, as a separate producer, submits `n`
 * one-step workflows one at a time `intervalMs` apart. Each input carries `t`, taken just
 * before the submit call, and the handler's first line records `now - t`: the latency includes
 * the submit's round trips and commit and the wake-up. Nearest-rank p50/p95/p99/max.
 */
export async function runPickup(context: RunContext): Promise<Measurement> {
  const { system, n } = context;
  const producer = await system.producer(context.url, 1, 'job');
  await producer.submit({ i: -1, warm: true });
  const workers = spawnWorkers({ spec: context.spec, url: context.url, mode: 'job' }, 1);
  const worker = workers[0] as (typeof workers)[0];
  await worker.ready;
  const deadline = now() + context.timeoutMs;
  go(workers);
  await worker.started;
  while (worker.count < 1 && now() < deadline) await sleep(5);
  await sleep(500); // let the worker settle into waiting

  const started = now();
  let late = 0;
  for (let i = 0; i < n; i++) {
    const wait = started + i * context.intervalMs - now();
    if (wait > 0) await sleep(wait);
    else if (wait < -1) late += 1;
    await producer.submit({ i, t: now() });
  }
  const submitSpanMs = now() - started;
  const done = await waitForDatabase(context, 'job', n + 1, deadline);
  const [final] = await stopWorkers(workers);
  await producer.close();
  const latencies = final?.latencies ?? [];
  const latency = latencyStats(latencies);
  // The first tenth apart (in the order handlers started): a cost paid only at first, such as
  // a statement's first plans on each pooled connection, shows there and not in the rest.
  const tenth = Math.ceil(latencies.length / 10);
  const latencyFirstTenth = latencyStats(latencies.slice(0, tenth));
  const latencyRest = latencyStats(latencies.slice(tenth));
  const verification = await system.verify(context.pool, 'job', {
    workflows: n + 1,
    finished: n + 1,
  });
  const problems = [...verification.problems];
  if (done.error !== null) problems.push(done.error);
  if (latency.count !== n) problems.push(`${latency.count} latencies for ${n} submits`);
  return {
    metric: 'pickup latency ms (p50)',
    value: latency.p50,
    latency,
    latencyFirstTenth,
    latencyRest,
    intervalMs: context.intervalMs,
    submitSpanMs,
    lateSubmits: late,
    verified: problems.length === 0,
    problems,
    checks: verification.checks,
  };
}
