import type { QueuePause } from '@causeway/workflow/internal';
import { sql } from 'kysely';
import type { Db } from '../database';

export type { QueuePause };

/** One pause or resume of a queue, as kept in its history (R53). */
export interface QueuePauseEvent {
  readonly queue: string;
  readonly kind: 'paused' | 'resumed';
  readonly operator: string;
  /** The pause's reason; a resume's, when the operator gave one. */
  readonly reason: string | null;
  readonly at: Date;
}

/**
 * An operator's pause of a queue (R53), with its history row, in one statement. Pausing a
 * paused queue writes nothing and keeps the first pause's operator, reason and time; answers
 * whether this call paused it.
 */
export async function queuePauseWrite(
  db: Db,
  request: { readonly queue: string; readonly operator: string; readonly reason: string },
): Promise<boolean> {
  const { rows } = await sql<{ changed: boolean }>`
    with paused as (
      insert into causeway_queue_pauses (queue, operator, reason, paused_at)
      values (${request.queue}, ${request.operator}, ${request.reason}, causeway_now())
      on conflict (queue) do nothing
      returning queue, operator, reason, paused_at
    ),
    event as (
      insert into causeway_queue_pause_events (queue, kind, operator, reason, at)
      select queue, 'paused', operator, reason, paused_at from paused
    )
    select exists (select 1 from paused) as changed`.execute(db);
  return rows[0]?.changed === true;
}

/**
 * An operator's resume of a queue (R53), with its history row, in one statement. Resuming a
 * queue that is not paused writes nothing; answers whether this call resumed it.
 */
export async function queueResumeWrite(
  db: Db,
  request: { readonly queue: string; readonly operator: string; readonly reason: string | null },
): Promise<boolean> {
  const { rows } = await sql<{ changed: boolean }>`
    with resumed as (
      delete from causeway_queue_pauses where queue = ${request.queue} returning queue
    ),
    event as (
      insert into causeway_queue_pause_events (queue, kind, operator, reason, at)
      select queue, 'resumed', ${request.operator}, ${request.reason}::text, causeway_now()
      from resumed
    )
    select exists (select 1 from resumed) as changed`.execute(db);
  return rows[0]?.changed === true;
}

/** Every paused queue, by name. */
export async function queuePauseList(db: Db): Promise<Map<string, QueuePause>> {
  const { rows } = await sql<{ queue: string; operator: string; reason: string; paused_at: Date }>`
    select queue, operator, reason, paused_at from causeway_queue_pauses order by queue`.execute(
    db,
  );
  return new Map(
    rows.map((row) => [
      row.queue,
      { operator: row.operator, reason: row.reason, pausedAt: row.paused_at },
    ]),
  );
}

/** The latest pauses and resumes of the named queues (at most `limit` each), oldest first. */
export async function queuePauseEventList(
  db: Db,
  queues: readonly string[],
  limit: number,
): Promise<QueuePauseEvent[]> {
  if (queues.length === 0) return [];
  const { rows } = await sql<QueuePauseEvent>`
    select e.queue, e.kind, e.operator, e.reason, e.at
    from unnest(${[...queues]}::text[]) as q(queue)
    cross join lateral (
      select * from causeway_queue_pause_events as e
      where e.queue = q.queue order by e.id desc limit ${limit}
    ) as e
    order by e.queue, e.id`.execute(db);
  return rows;
}

/**
 * The condition a claim adds so that it takes nothing from a paused queue (R53): uncorrelated,
 * so the planner evaluates it once per statement (a one-time filter), and a claim that starts
 * after a pause commits sees it in its snapshot.
 */
export function queueNotPausedSql(queue: string) {
  return sql`not exists (select 1 from causeway_queue_pauses where queue = ${queue})`;
}
