import pg from 'pg';
import { sleep } from './clock';

/** Lock waits seen in W6's samples while the children drain (`pg_stat_activity`, `pg_locks`). */
export interface LockWaits {
  /** Samples taken from the children's commit until the parent was seen succeeded. */
  readonly samples: number;
  /** Samples in which some backend of the run's database waited on a heavyweight lock. */
  readonly waiting: number;
  /** Samples in which some backend waited on one of the parent's rows (its workflow's, its step's). */
  readonly onParent: number;
  /** Backends waiting on the parent's rows, summed over the samples (÷ samples: the mean). */
  readonly parentWaiters: number;
  /** The longest wait seen (now − `pg_locks.waitstart`), any lock, and on the parent's rows. */
  readonly longestMs: number;
  readonly longestOnParentMs: number;
}

/** What the watch saw, in database time (epoch ms). */
export interface ParentWatch {
  /** The first sample that saw the parent's step past `leased`: its children committed. */
  readonly stepSeenAt: number;
  /** The first sample that saw the parent workflow `succeeded`. */
  readonly doneSeenAt: number;
  readonly lockWaits: LockWaits;
}

/** Sample gaps: the commit is looked for closely, the drain's locks every few ms. */
const startIntervalMs = 1;
const drainIntervalMs = 5;

const stateSql = `
  select (extract(epoch from clock_timestamp()) * 1000)::float8 as at,
    (select t.state from causeway_tasks as t where t.workflow_id = $1::uuid limit 1) as step,
    (select w.state from causeway_workflows as w where w.id = $1::uuid) as workflow,
    (select count(*) from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock')::int as waiting`;

/**
 * Each backend of the database waiting on a lock, how long it has waited, and whether it waits
 * on one of the parent's rows (its workflow's, its step's). A backend waiting for a row holds
 * that row's tuple lock while it waits for the holder's transaction (later ones wait for the
 * tuple lock itself); the tuple is the version the holder locked, which this statement's
 * snapshot still sees while the holder has not committed.
 */
const waitsSql = `
  select (extract(epoch from clock_timestamp() - l.waitstart) * 1000)::float8 as waited_ms,
    exists (select 1 from pg_locks as tl
      cross join lateral (select format('(%s,%s)', tl.page, tl.tuple)::tid as ctid) as at
      where tl.pid = l.pid and tl.locktype = 'tuple'
        and ((tl.relation = 'causeway_workflows'::regclass and exists (
              select 1 from causeway_workflows as w where w.ctid = at.ctid and w.id = $1::uuid))
          or (tl.relation = 'causeway_tasks'::regclass and exists (
              select 1 from causeway_tasks as t
              where t.ctid = at.ctid and t.workflow_id = $1::uuid)))) as on_parent
  from pg_stat_activity as a
  join pg_locks as l on l.pid = a.pid and not l.granted
  where a.datname = current_database() and a.pid <> pg_backend_pid()`;

/**
 * Watches W6's parent on its own connection until it is seen `succeeded`, `stop()` is called or
 * `deadline` (epoch ms, local clock) passes: when its step's children became visible, when
 * the parent did, and the lock waits sampled in between.
 */
export function watchParent(
  url: string,
  parentId: string,
  deadline: number,
): { readonly done: Promise<ParentWatch>; stop(): void } {
  let stopped = false;
  const done = (async (): Promise<ParentWatch> => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    let stepSeenAt = Number.NaN;
    let doneSeenAt = Number.NaN;
    const waits = {
      samples: 0,
      waiting: 0,
      onParent: 0,
      parentWaiters: 0,
      longestMs: 0,
      longestOnParentMs: 0,
    };
    try {
      while (!stopped && Date.now() < deadline && Number.isNaN(doneSeenAt)) {
        const { rows } = await client.query<{
          at: number;
          step: string | null;
          workflow: string | null;
          waiting: number;
        }>(stateSql, [parentId]);
        const state = rows[0];
        if (state === undefined) throw new Error('the watch read no row');
        const draining = !Number.isNaN(stepSeenAt);
        if (!draining && state.step !== null && !['queued', 'leased'].includes(state.step)) {
          stepSeenAt = state.at;
        }
        if (state.workflow === 'succeeded') doneSeenAt = state.at;
        if (draining && Number.isNaN(doneSeenAt)) {
          waits.samples += 1;
          if (state.waiting > 0) await sampleWaits(client, parentId, waits);
        }
        await sleep(draining ? drainIntervalMs : startIntervalMs);
      }
    } finally {
      await client.end();
    }
    return { stepSeenAt, doneSeenAt, lockWaits: waits };
  })();
  return {
    done,
    stop() {
      stopped = true;
    },
  };
}

async function sampleWaits(
  client: pg.Client,
  parentId: string,
  waits: { -readonly [K in keyof LockWaits]: LockWaits[K] },
): Promise<void> {
  const { rows } = await client.query<{ waited_ms: number | null; on_parent: boolean }>(waitsSql, [
    parentId,
  ]);
  if (rows.length === 0) return;
  waits.waiting += 1;
  const onParent = rows.filter((row) => row.on_parent);
  if (onParent.length > 0) waits.onParent += 1;
  waits.parentWaiters += onParent.length;
  for (const row of rows) {
    const waited = row.waited_ms ?? 0;
    waits.longestMs = Math.max(waits.longestMs, waited);
    if (row.on_parent) waits.longestOnParentMs = Math.max(waits.longestOnParentMs, waited);
  }
}
