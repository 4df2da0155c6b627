import { now, parallelFor } from '../clock';
import { checkpoint } from '../server';
import type { Measurement, RunContext } from './context';

/**
 * W1a: `n` one-step workflows submitted one by one by `producers` concurrent loops, each
 * awaiting one submit at a time. W1b: the same through the batch API, `n / batch` sequential
 * calls. Timed from the first call to the last resolved one, after an untimed warm-up.
 */
export async function runSubmit(
  context: RunContext,
  style: 'one-by-one' | 'batched',
): Promise<Measurement> {
  const { system, n, producers, batch } = context;
  const producer = await system.producer(context.url, producers, 'job');
  const warm = style === 'one-by-one' ? producers : 1;
  if (style === 'one-by-one') {
    await parallelFor(warm, producers, (i) => producer.submit({ i: -1 - i, warm: true }));
  } else {
    await producer.submitBatch([{ i: -1, warm: true }]);
  }
  await checkpoint(context.pool);
  const started = now();
  if (style === 'one-by-one') {
    await parallelFor(n, producers, (i) => producer.submit({ i }));
  } else {
    for (let first = 0; first < n; first += batch) {
      const size = Math.min(batch, n - first);
      await producer.submitBatch(Array.from({ length: size }, (_, j) => ({ i: first + j })));
    }
  }
  const elapsedMs = now() - started;
  await producer.close();
  const verification = await system.verify(context.pool, 'job', {
    workflows: n + warm,
    finished: 0,
  });
  return {
    metric: 'workflows/s',
    value: n / (elapsedMs / 1000),
    elapsedMs,
    warmup: warm,
    verified: verification.ok,
    problems: verification.problems,
    checks: verification.checks,
  };
}
