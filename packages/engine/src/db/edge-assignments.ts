import type { EdgeEffects } from '@causeway/workflow/internal';
import { type RawBuilder, sql } from 'kysely';

/**
 * The SET clause of a one-statement edge, generated from the edge table's effects so the
 * statements write exactly what the table declares (and what the full decision computes in
 * memory). A column's value is an expression (`base`, or the column's current value when
 * null) plus a constant offset, so two edges in a row (promotion, then claim) compose.
 */
export interface ColumnValue {
  readonly base: RawBuilder<unknown> | null;
  readonly add: number;
  /** The value is SQL null (so a CASE of two nulls is written as a plain null, not as text). */
  readonly isNull?: true;
}

export type Assignments = ReadonlyMap<string, ColumnValue>;

/** What the constant effects refer to: the statement's time, the claimer and its lease. */
export interface EffectValues {
  readonly now: RawBuilder<unknown>;
  /** The claimer, for an edge that takes the lease. */
  readonly holder?: RawBuilder<unknown>;
  /** The lease length in milliseconds, as SQL (a parameter). */
  readonly leaseMs?: RawBuilder<unknown>;
  /**
   * The statement writes only steps without a delay, so a `delay` is now (the engine leaves
   * results that would make a delayed step ready to the full decision).
   */
  readonly undelayed?: true;
}

const set = (base: RawBuilder<unknown>): ColumnValue => ({ base, add: 0 });
const offset = (add: number): ColumnValue => ({ base: null, add });
const clear: ColumnValue = { base: sql`null`, add: 0, isNull: true };

/** The columns an edge's effects write, with their new values. */
export function effectAssignments(effects: EdgeEffects, values: EffectValues): Assignments {
  const columns = new Map<string, ColumnValue>();
  switch (effects.lease) {
    case 'take': {
      const { holder, leaseMs } = values;
      if (holder === undefined || leaseMs === undefined) {
        throw new Error('an edge that takes the lease needs a holder and a lease length');
      }
      columns.set('lease_holder', set(holder));
      columns.set('lease_epoch', offset(1));
      columns.set(
        'lease_expires_at',
        set(sql`${values.now} + ${leaseMs} * interval '1 millisecond'`),
      );
      break;
    }
    case 'release':
      columns.set('lease_holder', clear);
      columns.set('lease_expires_at', clear);
      break;
    case 'keep':
      break;
  }
  switch (effects.attempt) {
    case 'next':
      columns.set('attempt', offset(1));
      break;
    case 'refund':
      columns.set('attempt', offset(-1));
      break;
    case 'reset':
      columns.set('attempt', set(sql`0`));
      break;
    case 'same':
      break;
  }
  switch (effects.runAt) {
    case 'now':
      columns.set('run_at', set(values.now));
      break;
    case 'delay':
      if (values.undelayed !== true) {
        throw new Error("a step's delay is per step; this statement cannot write it");
      }
      columns.set('run_at', set(values.now));
      break;
    case 'until':
      throw new Error('a snooze is asked for per task; one statement cannot write it');
    case 'clear':
      columns.set('run_at', clear);
      break;
    case 'backoff':
      throw new Error('a backoff is computed per task; one statement cannot write it');
    case 'keep':
      break;
  }
  if (effects.marker === 'reset') columns.set('effect_started', set(sql`false`));
  switch (effects.receipt) {
    case 'clear':
      columns.set('receipt_id', clear);
      columns.set('receipt_deadline_at', clear);
      break;
    case 'await':
      throw new Error('a receipt comes with its request; one statement cannot write it');
    case 'keep':
      break;
  }
  if (effects.replay === 'next') {
    columns.set('replay_count', offset(1));
    columns.set('deadline_at', clear);
  }
  switch (effects.wait) {
    case 'start':
      throw new Error("a wait's key and timeout are per step; one statement cannot write them");
    case 'clear':
      for (const column of ['event_name', 'event_key', 'wait_since', 'wait_timeout_at']) {
        columns.set(column, clear);
      }
      break;
    case 'keep':
      break;
  }
  return columns;
}

/** The assignments of `first` followed by `second`, as one write. */
export function thenAssignments(first: Assignments, second: Assignments): Assignments {
  const columns = new Map(first);
  for (const [column, value] of second) {
    const before = first.get(column);
    columns.set(
      column,
      value.base === null && before !== undefined
        ? { base: before.base, add: before.add + value.add }
        : value,
    );
  }
  return columns;
}

/** A column's new value as SQL, given its current value. */
export function valueSql(
  assignments: Assignments,
  column: string,
  current: RawBuilder<unknown>,
): RawBuilder<unknown> {
  const value = assignments.get(column);
  if (value === undefined) return current;
  const base = value.base ?? current;
  return value.add === 0 ? base : sql`${base} + ${sql.lit(value.add)}`;
}

/** `column = value, …` for an UPDATE of `table` (its alias), in a stable column order. */
export function setList(assignments: Assignments, table: string): RawBuilder<unknown> {
  return sql.join(
    [...assignments.keys()]
      .sort()
      .map(
        (column) =>
          sql`${sql.id(column)} = ${valueSql(assignments, column, sql.ref(`${table}.${column}`))}`,
      ),
  );
}

/**
 * `column = case when condition then … else … end, …`: one UPDATE that writes either of two
 * edges' assignments per row (a column only one of them writes keeps its value in the other).
 */
export function caseSetList(
  condition: RawBuilder<unknown>,
  whenTrue: Assignments,
  whenFalse: Assignments,
  table: string,
): RawBuilder<unknown> {
  const columns = [...new Set([...whenTrue.keys(), ...whenFalse.keys()])].sort();
  return sql.join(
    columns.map((column) => {
      const current = sql.ref(`${table}.${column}`);
      if (whenTrue.get(column)?.isNull && whenFalse.get(column)?.isNull) {
        return sql`${sql.id(column)} = null`;
      }
      return sql`${sql.id(column)} = case when ${condition}
        then ${valueSql(whenTrue, column, current)} else ${valueSql(whenFalse, column, current)} end`;
    }),
  );
}
