/**
 * Checks on the raw log for the engine's scenario tests. The edge check reads the log with
 * plain SQL and judges it by the contract's edge table and R24 actor text as written out in
 * test/helpers/contract-tables.ts, not by the code's own `isAllowedEdge`/`parseActor`, so
 * an edge the code wrongly allows still shows here.
 */
import type { ReasonCode, TaskState, Transition } from '@causeway/workflow';
import { expect } from 'vitest';
import { specActorKind, specAllowsEdge } from '../helpers/contract-tables';
import { logMismatches, query } from '../helpers/engine';

/** A transition row as stored, for checks on the raw log. */
export interface LogRow extends Record<string, unknown> {
  id: string;
  workflow_id: string;
  task_id: string | null;
  step: string | null;
  from_state: string | null;
  to_state: string;
  reason: string;
  actor: string;
  attempt: number;
  at: Date;
  detail: Record<string, unknown> | null;
}

/**
 * The edge table (docs/state-machine.md): every task row of the log is an edge the table
 * allows, taken by an actor of an allowed kind. Returns the offending rows (empty when every
 * edge is allowed).
 */
export async function disallowedEdges(databaseUrl: string): Promise<LogRow[]> {
  const rows = await query<LogRow>(
    databaseUrl,
    'select * from causeway_transitions where task_id is not null order by id',
  );
  return rows.filter((row) => {
    let kind: ReturnType<typeof specActorKind>;
    try {
      kind = specActorKind(row.actor);
    } catch {
      return true;
    }
    return !specAllowsEdge(
      row.from_state as TaskState | null,
      row.to_state as TaskState,
      row.reason as ReasonCode,
      kind,
    );
  });
}

/**
 * Each task's and each workflow's rows form a chain: the first comes from nothing and every
 * later row starts where the previous one ended. Returns the rows that break it.
 */
export async function brokenChains(databaseUrl: string): Promise<LogRow[]> {
  const rows = await query<LogRow>(databaseUrl, 'select * from causeway_transitions order by id');
  const lastTo = new Map<string, string>();
  const broken: LogRow[] = [];
  for (const row of rows) {
    const subject = row.task_id ?? `workflow:${row.workflow_id}`;
    const previous = lastTo.get(subject) ?? null;
    if (row.from_state !== previous) broken.push(row);
    lastTo.set(subject, row.to_state);
  }
  return broken;
}

/** The end-of-file check: R25 holds and every edge written is in the edge table. */
export async function expectLogIsSound(databaseUrl: string): Promise<void> {
  const counted = await query<{ n: number }>(
    databaseUrl,
    'select count(*)::int as n from causeway_transitions where task_id is not null',
  );
  expect(counted[0]?.n, 'the file wrote task edges').toBeGreaterThan(0);
  expect(await disallowedEdges(databaseUrl)).toEqual([]);
  expect(await brokenChains(databaseUrl)).toEqual([]);
  expect(await logMismatches(databaseUrl)).toEqual([]);
}

/** Row counts of every Causeway table: bad input must leave all of them unchanged (R34). */
export interface TableCounts extends Record<string, number> {
  workflows: number;
  tasks: number;
  transitions: number;
}

export async function tableCounts(databaseUrl: string): Promise<TableCounts> {
  const rows = await query<TableCounts>(
    databaseUrl,
    `select (select count(*)::int from causeway_workflows) as workflows,
            (select count(*)::int from causeway_tasks) as tasks,
            (select count(*)::int from causeway_transitions) as transitions`,
  );
  return rows[0] as TableCounts;
}

/** Database time (causeway_now(), including the test offset). */
export async function databaseTime(databaseUrl: string): Promise<Date> {
  const rows = await query<{ now: Date }>(databaseUrl, 'select causeway_now() as now');
  return (rows[0] as { now: Date }).now;
}

/** A promise the test resolves by hand: lets a step wait until the test says go. */
export interface Gate {
  readonly promise: Promise<void>;
  open(): void;
}

export function gate(): Gate {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** Reasons of a task's edges in log order. */
export function reasons(transitions: readonly Transition[]): string[] {
  return transitions.map((row) => row.reason);
}

/** The task rows of one task, straight from the log. */
export async function taskLog(databaseUrl: string, taskId: string): Promise<LogRow[]> {
  return query<LogRow>(
    databaseUrl,
    'select * from causeway_transitions where task_id = $1 order by id',
    [taskId],
  );
}
