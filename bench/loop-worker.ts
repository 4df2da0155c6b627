import pg from 'pg';
import type { BenchWorker } from './system';

/** What both raw SQL floors (L and S) configure of their worker loops. */
export interface LoopSpec {
  /** Loops, each on its own connection. */
  readonly concurrency: number;
  /** LISTEN on the floor's channel to wake idle loops (else they only poll). */
  readonly notify: boolean;
  readonly idlePollMs: number;
}

/**
 * The worker of the raw SQL floors: `concurrency` loops, each on its own connection, running
 * `cycle` (claim, run, complete) back to back. A cycle that found no work sends its loop to
 * sleep until a NOTIFY on `channel` or `idlePollMs`, whichever comes first.
 */
export function loopWorker(
  url: string,
  spec: LoopSpec,
  channel: string,
  cycle: (client: pg.PoolClient) => Promise<boolean>,
): BenchWorker {
  const pool = new pg.Pool({ connectionString: url, max: spec.concurrency });
  pool.on('error', () => {});
  let listener: pg.Client | null = null;
  let stopping = false;
  let waiting: (() => void)[] = [];
  const wakeAll = () => {
    const woken = waiting;
    waiting = [];
    for (const wake of woken) wake();
  };
  const idle = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      waiting.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  const loop = async (client: pg.PoolClient): Promise<void> => {
    while (!stopping) {
      if (!(await cycle(client))) await idle(spec.idlePollMs);
    }
  };

  const clients: pg.PoolClient[] = [];
  let loops: Promise<void>[] = [];
  return {
    async start() {
      if (spec.notify) {
        listener = new pg.Client({ connectionString: url });
        await listener.connect();
        listener.on('notification', wakeAll);
        await listener.query(`listen ${channel}`);
      }
      for (let index = 0; index < spec.concurrency; index++) clients.push(await pool.connect());
      loops = clients.map((client) =>
        loop(client).catch((error) => {
          if (!stopping) console.error(`${channel} loop failed`, error);
        }),
      );
    },
    async stop() {
      stopping = true;
      wakeAll();
      await Promise.all(loops);
      for (const client of clients) client.release();
      await listener?.end();
      await pool.end();
    },
  };
}
