import { createEngine, type Engine, type EngineOptions } from '@causeway/engine';
import pg from 'pg';
import { pino } from 'pino';
import { afterEach } from 'vitest';

/** Engines made by a test file are closed after each test. */
const open = new Set<Engine>();
afterEach(async () => {
  await Promise.all([...open].map((engine) => engine.close({ drainMs: 1_000 })));
  open.clear();
});

/** An engine on a test database with a silent logger (set CAUSEWAY_TEST_LOG=1 to see it). */
export function testEngine(
  databaseUrl: string,
  options: Omit<EngineOptions, 'databaseUrl'>,
): Engine {
  const logger = pino({ level: process.env.CAUSEWAY_TEST_LOG === '1' ? 'debug' : 'silent' });
  const engine = createEngine({
    logger,
    leaseMs: 2_000,
    sweepIntervalMs: 100,
    pollIntervalMs: 200,
    ...options,
    databaseUrl,
  });
  open.add(engine);
  return engine;
}

/** Runs SQL on a database directly (to check what the engine wrote). */
export async function query<Row extends Record<string, unknown>>(
  databaseUrl: string,
  text: string,
  values: unknown[] = [],
): Promise<Row[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  // A connection the server cuts (a fault test stops it or terminates backends) fails the
  // statement; unheard, its 'error' event would also crash the test process.
  client.on('error', () => undefined);
  await client.connect();
  try {
    return (await client.query<Row>(text, values)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * R25: every task's and every workflow's state equals the `to` of its last transition; and
 * every event delivery names a stored event. Returns the offending rows (empty when the
 * invariant holds).
 */
export async function logMismatches(databaseUrl: string): Promise<Record<string, unknown>[]> {
  return query(
    databaseUrl,
    `select 'task' as kind, t.id, t.state, last.to_state from causeway_tasks t
       left join lateral (select to_state from causeway_transitions where workflow_id = t.workflow_id and task_id = t.id order by id desc limit 1) last on true
      where last.to_state is distinct from t.state
     union all
     select 'workflow', w.id, w.state, last.to_state from causeway_workflows w
       left join lateral (select to_state from causeway_transitions
                           where workflow_id = w.id and task_id is null order by id desc limit 1) last on true
      where last.to_state is distinct from w.state
     union all
     -- Deliveries have no foreign key (0019): each must name a stored event.
     select 'delivery', d.task_id, null, d.event_id::text from causeway_event_deliveries d
      where not exists (select 1 from causeway_events e where e.id = d.event_id)`,
  );
}

/** Moves the database clock (causeway_now()) by `offsetMs` (R11). */
export async function setDatabaseClockOffset(databaseUrl: string, offsetMs: number): Promise<void> {
  await query(databaseUrl, 'update causeway_clock set offset_ms = $1', [offsetMs]);
}

/**
 * Chained leases of the workflows `ids`, per step: `lease_acquired` rows written by the same
 * transaction as a step's success in their workflow (the settle statement that chained them).
 */
export async function chainedLeases(
  databaseUrl: string,
  ids: readonly string[],
): Promise<{ step: string; n: number }[]> {
  return query(
    databaseUrl,
    `select next.step, count(*)::int as n
       from causeway_transitions as next
       join causeway_transitions as done
         on done.workflow_id = next.workflow_id and done.xmin::text = next.xmin::text
        and done.to_state = 'succeeded' and done.task_id is not null
      where next.workflow_id = any($1::uuid[]) and next.reason = 'lease_acquired'
      group by next.step order by next.step`,
    [ids],
  );
}
