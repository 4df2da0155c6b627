import type pg from 'pg';

/**
 * The contract's floor for one event sent to one waiting one-step workflow (R38), for
 * `pnpm bench:events --floor`: one round trip, a PL/pgSQL function written for this workload
 * alone, that takes the (name, key) lock, then stores the event and makes only the writes the
 * send must make (the task and the parent to succeeded, their two log rows, the delivery, the
 * wake-up) with nothing derived, checked or answered. What the engine's send costs above it is
 * what its generality costs.
 */
export async function installEventFloor(pool: pg.Pool): Promise<void> {
  await pool.query(`
    create or replace function bench_floor_send(n text, k text, p jsonb) returns integer
    language plpgsql volatile as $$
    declare
      w record;
      done integer := 0;
      at timestamptz := statement_timestamp();
      event uuid := gen_random_uuid();
    begin
      perform pg_advisory_xact_lock(hashtext('causeway_event'), hashtext(n || E'\\n' || k));
      insert into causeway_events (id, name, key, payload, sent_by, received_at)
        values (event, n, k, p, 'client', at);
      for w in
        select id, workflow_id, step, attempt from causeway_tasks
        where state = 'waiting' and event_name = n and event_key = k
      loop
        perform 1 from causeway_workflows where id = w.workflow_id for update;
        update causeway_tasks set state = 'succeeded', output = p, event_name = null,
          event_key = null, wait_since = null, wait_timeout_at = null, run_at = null,
          lease_holder = null, lease_expires_at = null, updated_at = at
        where id = w.id and state = 'waiting';
        update causeway_workflows set state = 'succeeded', updated_at = at where id = w.workflow_id;
        insert into causeway_transitions
          (workflow_id, task_id, step, from_state, to_state, reason, actor, attempt, at, detail)
        values
          (w.workflow_id, w.id, w.step, 'waiting', 'succeeded', 'event_received', 'client',
            w.attempt, at, jsonb_build_object('eventId', event)),
          (w.workflow_id, null, null, 'waiting', 'succeeded', 'event_received', 'client', 0, at,
            jsonb_build_object('step', w.step));
        insert into causeway_event_deliveries (event_id, task_id, workflow_id, delivered_at)
          values (event, w.id, w.workflow_id, at);
        done := done + 1;
      end loop;
      perform pg_notify('causeway_transitions', '');
      return done;
    end
    $$`);
}

/** Sends one event through the floor; answers how many waits it completed. */
export async function floorSend(
  pool: pg.Pool,
  name: string,
  key: string,
  payload: unknown,
): Promise<number> {
  const { rows } = await pool.query('select bench_floor_send($1, $2, $3::jsonb) as done', [
    name,
    key,
    JSON.stringify(payload),
  ]);
  return rows[0].done;
}
