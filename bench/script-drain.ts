import { fork } from 'node:child_process';
import type { Engine } from '@causeway/engine';
import type pg from 'pg';

/**
 * The drain of the standalone flow-control scripts (key-fairness.ts, rate-limited-drain.ts):
 * worker processes, each a fork of the script itself, draining until told to stop.
 */

/** In a forked worker process: starts `engine`'s worker (concurrency 10), says ready, stops when told. */
export async function serveWorker(engine: Engine): Promise<void> {
  const handle = await engine.startWorker({ concurrency: 10 });
  process.send?.('ready');
  process.on('message', async () => {
    await handle.stop({ drainMs: 1_000 });
    await engine.close();
    process.exit(0);
  });
}

/**
 * Forks `count` worker processes of `script` with `args`, waits until `pool`'s database has no
 * workflow left unfinished (polled every `pollMs`), then stops them and waits for their exit.
 */
export async function drainWithWorkers(
  pool: pg.Pool,
  script: string,
  args: readonly string[],
  count: number,
  pollMs = 100,
): Promise<void> {
  const children = Array.from({ length: count }, () =>
    fork(script, [...args], { execArgv: ['--import', 'tsx'], stdio: 'inherit' }),
  );
  await Promise.all(
    children.map((child) => new Promise((resolve) => child.once('message', resolve))),
  );
  for (;;) {
    const { rows } = await pool.query<{ open: number }>(
      `select count(*)::int as open from causeway_workflows where state <> 'succeeded'`,
    );
    if ((rows[0]?.open ?? 1) === 0) break;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
  for (const child of children) child.send('stop');
  await Promise.all(children.map((child) => new Promise((resolve) => child.once('exit', resolve))));
}
