/**
 * The reliability suite's invariants (issue 19), checked against the database, the example
 * platform and the handler-start ledger after a scenario's load has drained:
 *
 * - every submitted workflow exists, and every workflow is in an allowed state (terminal by
 *   default);
 * - no handler started twice for the same (task, attempt); a non-reentrant step whose effect
 *   started never runs again, except after its own reported failure (R17), and its lease's
 *   expiry ends it `dead` (`lease_expired_effect_uncertain`, R10), never `queued`;
 * - at most one platform effect per idempotency key;
 * - R25 for every task and workflow (logMismatches);
 * - each workflow's state is the aggregation of its children, by the tests' own encoding of
 *   the table (specParentState), never the production aggregate.
 *
 * `checkInvariants` returns the violations with counts for the report; `assertInvariants`
 * throws when there is any. Replays (which restart attempt numbers) are outside its model.
 */
import type { TaskState, WorkflowState } from '@causeway/workflow';
import { specParentState } from '../../helpers/contract-tables';
import { logMismatches, query } from '../../helpers/engine';
import { ledgerTable } from './ledger';

/** An effect the platform performed, as its stats list it (posts, assets). */
export interface PlatformEffect {
  readonly idempotencyKey: string | null;
}

export interface InvariantInput {
  readonly databaseUrl: string;
  /** Ids of the workflows the scenario submitted (each must exist). */
  readonly submitted: readonly string[];
  /** States every workflow may be in (default: the terminal ones). */
  readonly allowedStates?: readonly WorkflowState[];
  /** Workflows allowed to be in any state (e.g. ones parked on purpose). */
  readonly exempt?: readonly string[];
  /** The platform's effects, when the scenario's steps call it. */
  readonly effects?: readonly PlatformEffect[];
  /** True when the worker processes wrote the ledger (ledger.ts). */
  readonly ledger?: boolean;
}

export interface InvariantCounts {
  readonly workflows: number;
  readonly tasks: number;
  readonly workflowsByState: Record<string, number>;
  /** Dead tasks by the reason of the edge that made them dead. */
  readonly deadByReason: Record<string, number>;
  /** Edges that put a leased task back in the queue, by reason (retries). */
  readonly requeuesByReason: Record<string, number>;
  readonly handlerStarts: number;
  readonly effectsStarted: number;
  readonly platformEffects: number;
}

export interface InvariantReport {
  readonly violations: Record<string, readonly unknown[]>;
  readonly counts: InvariantCounts;
}

const terminalWorkflowStates: readonly WorkflowState[] = ['succeeded', 'cancelled', 'dead'];

export async function checkInvariants(input: InvariantInput): Promise<InvariantReport> {
  const url = input.databaseUrl;
  const allowed = input.allowedStates ?? terminalWorkflowStates;
  const violations: Record<string, unknown[]> = {};
  // Fresh statistics: tables that grew by 10^5 rows within a minute would get naive plans.
  await query(
    url,
    `analyze causeway_workflows, causeway_tasks, causeway_transitions${input.ledger === true ? `, ${ledgerTable}` : ''}`,
  );

  violations.missingWorkflows = await query(
    url,
    `select s.id from unnest($1::uuid[]) as s(id)
      where not exists (select 1 from causeway_workflows w where w.id = s.id)`,
    [input.submitted],
  );
  violations.workflowsInDisallowedState = await query(
    url,
    `select id, name, state from causeway_workflows
      where state <> all($1::text[]) and id <> all($2::uuid[]) order by id limit 50`,
    [allowed, input.exempt ?? []],
  );
  violations.logMismatches = await logMismatches(url);
  violations.parentNotAggregateOfChildren = await aggregationMismatches(url);
  violations.effectsPerKeyOverOne = effectsOverOne(input.effects ?? []);
  if (input.ledger === true) Object.assign(violations, await ledgerViolations(url));

  for (const [name, rows] of Object.entries(violations)) {
    if (rows.length === 0) delete violations[name];
  }
  return { violations, counts: await counts(input) };
}

/** Throws, listing (up to 20 of) each kind of violation, unless every invariant holds. */
export async function assertInvariants(input: InvariantInput): Promise<InvariantCounts> {
  const report = await checkInvariants(input);
  const names = Object.keys(report.violations);
  if (names.length > 0) {
    const listed = names.map(
      (name) =>
        `${name} (${report.violations[name]?.length}): ${JSON.stringify(report.violations[name]?.slice(0, 20))}`,
    );
    throw new Error(
      `invariants violated:\n${listed.join('\n')}\ncounts: ${JSON.stringify(report.counts)}`,
    );
  }
  return report.counts;
}

async function aggregationMismatches(url: string): Promise<unknown[]> {
  const rows = await query<{ id: string; state: WorkflowState; children: TaskState[] }>(
    url,
    `select w.id, w.state, array_agg(t.state order by t.id) as children
       from causeway_workflows w join causeway_tasks t on t.workflow_id = w.id
      group by w.id, w.state`,
  );
  return rows
    .filter((row) => specParentState(row.children) !== row.state)
    .map((row) => ({ ...row, expected: specParentState(row.children) }));
}

function effectsOverOne(effects: readonly PlatformEffect[]): unknown[] {
  const perKey = new Map<string, number>();
  for (const { idempotencyKey } of effects) {
    if (idempotencyKey !== null) perKey.set(idempotencyKey, (perKey.get(idempotencyKey) ?? 0) + 1);
  }
  return [...perKey].filter(([, n]) => n > 1).map(([key, n]) => ({ key, effects: n }));
}

async function ledgerViolations(url: string): Promise<Record<string, unknown[]>> {
  const handlerStartedTwice = await query(
    url,
    `select task_id, attempt, array_agg(holder) as holders from ${ledgerTable}
      where kind = 'start' group by task_id, attempt having count(*) > 1 limit 50`,
  );
  // How the attempt whose effect started ended: the first edge out of leased at that attempt.
  // A join, not a `limit 1` lookup per row (which the planner may run along the primary key).
  const effectAttempts = `with effect_attempts as materialized (
    select distinct on (e.task_id, e.attempt) e.task_id, e.attempt, x.reason as ended_by
      from ${ledgerTable} e
      left join causeway_transitions x
        on x.task_id = e.task_id and x.attempt = e.attempt
       and x.from_state in ('leased', 'cancel_requested')
     where e.kind = 'effect' and not e.reentrant
     order by e.task_id, e.attempt, x.id)`;
  const nonReentrantRanAgainAfterEffect = await query(
    url,
    `${effectAttempts}
     select a.task_id, a.attempt as effect_attempt, a.ended_by, s.attempt as later_attempt, s.holder
       from effect_attempts a
       join ${ledgerTable} s on s.task_id = a.task_id and s.kind = 'start' and s.attempt > a.attempt
      where a.ended_by is distinct from 'retry_scheduled' limit 50`,
  );
  // An expired lease after the effect started must end dead, not go back to the queue.
  const effectAttemptNotEndedDead = await query(
    url,
    `${effectAttempts}
     select a.task_id, a.attempt, a.ended_by from effect_attempts a
      where a.ended_by in ('lease_expired', 'worker_shutdown') limit 50`,
  );
  return { handlerStartedTwice, nonReentrantRanAgainAfterEffect, effectAttemptNotEndedDead };
}

async function counts(input: InvariantInput): Promise<InvariantCounts> {
  const url = input.databaseUrl;
  const tally = (rows: { key: string; n: number }[]) =>
    Object.fromEntries(rows.map((row) => [row.key, row.n]));
  const byState = await query<{ key: string; n: number }>(
    url,
    'select state as key, count(*)::int as n from causeway_workflows group by state order by state',
  );
  const deadByReason = await query<{ key: string; n: number }>(
    url,
    `select last.reason as key, count(*)::int as n from (
       select distinct on (t.id) x.reason from causeway_tasks t
         join causeway_transitions x on x.task_id = t.id
        where t.state = 'dead' order by t.id, x.id desc) last
      group by last.reason order by last.reason`,
  );
  const requeues = await query<{ key: string; n: number }>(
    url,
    `select reason as key, count(*)::int as n from causeway_transitions
      where task_id is not null and from_state = 'leased' and to_state = 'queued'
      group by reason order by reason`,
  );
  const [totals] = await query<{ tasks: number }>(
    url,
    'select count(*)::int as tasks from causeway_tasks',
  );
  const ledger =
    input.ledger === true
      ? await query<{ key: string; n: number }>(
          url,
          `select kind as key, count(*)::int as n from ${ledgerTable} group by kind`,
        )
      : [];
  const ledgerCounts = tally(ledger);
  return {
    workflows: byState.reduce((sum, row) => sum + row.n, 0),
    tasks: totals?.tasks ?? 0,
    workflowsByState: tally(byState),
    deadByReason: tally(deadByReason),
    requeuesByReason: tally(requeues),
    handlerStarts: ledgerCounts.start ?? 0,
    effectsStarted: ledgerCounts.effect ?? 0,
    platformEffects: input.effects?.length ?? 0,
  };
}
