import type { Engine } from '@causeway/engine';
import { now, sleep } from './clock';

/**
 * The claim's speed beside the operator's faces: `n` one-step workflows of `name` (whose
 * handler calls `counter.seen += 1`) submitted untimed in batches of 1,000, then drained by a
 * worker of this engine on the `default` queue, concurrency 10. Timed from the worker's start
 * to the n-th handler start; workflows/s.
 */
export async function drainThroughput(
  engine: Engine,
  name: string,
  n: number,
  counter: { seen: number },
): Promise<number> {
  for (let first = 0; first < n; first += 1_000) {
    const size = Math.min(1_000, n - first);
    await engine.submitMany(
      Array.from({ length: size }, (_, j) => ({ name, input: { i: first + j } })),
    );
  }
  counter.seen = 0;
  const started = now();
  const worker = await engine.startWorker({ queues: ['default'], concurrency: 10 });
  const deadline = started + 300_000;
  while (counter.seen < n) {
    if (now() > deadline) throw new Error(`drain: ${counter.seen} of ${n} after 300 s`);
    await sleep(2);
  }
  const elapsedMs = now() - started;
  await worker.stop({ drainMs: 5_000 });
  return n / (elapsedMs / 1000);
}
