import { now, parallelFor } from '../clock';
import { postmasterPid, processesCpuUs, serverCpuUs } from '../process-cpu';
import { checkpoint } from '../server';
import type { Mode } from '../system';
import { go, spawnWorkers, stopWorkers, waitForHandlers } from '../workers';
import { type Measurement, type RunContext, waitForDatabase } from './context';

/** w2d's delay: far enough that no delayed task comes due during a run. */
export const delayMs = 24 * 60 * 60 * 1000;

/**
 * W2 (mode `job`): drain `n` pre-submitted one-step workflows with `procs` worker processes.
 * w2k: W2 with every task keyed (R50), through Causeway's spec (`keys`, see bench/causeway.ts).
 * W4 (mode `workflow`): `n` three-step workflows end to end. w2h: W2 with `history` finished
 * workflows already in the tables. w2d: W2 with `delayed` more submitted a day into the future
 * (queued, in the same queue and the ready index, never due), their batches interleaved with
 * the others'. Submitting is untimed, followed by ANALYZE and CHECKPOINT;
 * the clock starts when the workers are told to start (their start-up is inside the window)
 * and stops when the handlers have seen all `n` and a database count confirms them finished.
 */
export async function runDrain(context: RunContext, mode: Mode): Promise<Measurement> {
  const { system, pool, n, batch, history, delayed } = context;
  if (history > 0) await system.insertHistory(pool, history);
  const preSubmitStarted = now();
  const producer = await system.producer(context.url, 4, mode);
  const chunks = interleavedChunks(n, delayed, batch);
  await parallelFor(chunks.length, 4, async (index) => {
    const { first, size, late } = chunks[index] as Chunk;
    const jobs = Array.from({ length: size }, (_, j) => ({ i: first + j }));
    if (!late) await producer.submitBatch(jobs);
    else if (producer.submitBatchDelayed) await producer.submitBatchDelayed(jobs, delayMs);
    else throw new Error(`${system.label} cannot submit delayed workflows`);
  });
  await producer.close();
  const preSubmitMs = now() - preSubmitStarted;
  await pool.query('analyze');
  await checkpoint(pool);

  const workers = spawnWorkers({ spec: context.spec, url: context.url, mode }, context.procs);
  await Promise.all(workers.map((worker) => worker.ready));
  const postmaster = await postmasterPid(pool);
  const cpu = () => ({
    db: serverCpuUs(postmaster),
    workers: processesCpuUs(workers.map((worker) => worker.child.pid ?? -1)),
    pooler: context.poolerPid === null ? Number.NaN : processesCpuUs([context.poolerPid]),
  });
  const cpuAtGo = cpu();
  const started = now();
  go(workers);
  const deadline = started + context.timeoutMs;
  const handlerError = await waitForHandlers(workers, n, deadline);
  const done = handlerError
    ? { at: now(), error: handlerError }
    : await waitForDatabase(context, mode, n + history, deadline, delayed);
  const cpuAtDone = cpu();
  const finals = await stopWorkers(workers);
  const handled = finals.reduce((sum, final) => sum + (final?.count ?? 0), 0);
  const verification = await system.verify(pool, mode, {
    workflows: n + history + delayed,
    finished: n + history,
  });
  // Like for like with W6's children: from the first claim to the last end, by the log (only
  // where the log holds just this drain).
  const span =
    system.drainSpan !== undefined && history === 0 && delayed === 0
      ? await system.drainSpan(pool, mode)
      : undefined;
  const problems = [...verification.problems];
  if (done.error !== null) problems.push(done.error);
  if (handled !== n) problems.push(`handlers saw ${handled} of ${n}`);
  const elapsedMs = done.at - started;
  const firstStart = Math.min(
    ...finals.map((final) => final?.firstStart ?? Number.POSITIVE_INFINITY),
  );
  return {
    metric: 'workflows/s',
    value: n / (elapsedMs / 1000),
    elapsedMs,
    /** Workflows ÷ (last task end − first claim), by the transition log's database time. */
    logRate: span?.workflowsPerS,
    preSubmitMs,
    workerStartMs: Math.max(...workers.map((worker) => worker.startedAt ?? Number.NaN)) - started,
    firstHandlerMs: firstStart - started,
    /** CPU cores busy on average from go to done (CPU seconds ÷ elapsed seconds). */
    cores: {
      db: (cpuAtDone.db - cpuAtGo.db) / 1e3 / elapsedMs,
      workers: (cpuAtDone.workers - cpuAtGo.workers) / 1e3 / elapsedMs,
      pooler: (cpuAtDone.pooler - cpuAtGo.pooler) / 1e3 / elapsedMs,
    },
    perProcess: finals.map((final) => final?.count ?? null),
    steps:
      mode === 'workflow' ? finals.reduce((sum, final) => sum + (final?.steps ?? 0), 0) : undefined,
    stalls: finals.map((final) => final?.stalls ?? []),
    verified: problems.length === 0,
    problems,
    checks: verification.checks,
  };
}

export interface Chunk {
  readonly first: number;
  readonly size: number;
  /** Submitted with w2d's delay. */
  readonly late: boolean;
}

/** Batches of the `n` to drain and of the `delayed`, interleaved evenly (inputs `i` unique). */
export function interleavedChunks(n: number, delayed: number, batch: number): Chunk[] {
  const cut = (count: number, offset: number, late: boolean) =>
    Array.from({ length: Math.ceil(count / batch) }, (_, k) => ({
      first: offset + k * batch,
      size: Math.min(batch, count - k * batch),
      late,
      at: (k + 0.5) / Math.ceil(count / batch),
    }));
  return [...cut(n, 0, false), ...cut(delayed, n, true)]
    .sort((a, b) => a.at - b.at)
    .map(({ first, size, late }) => ({ first, size, late }));
}
