import { parseActor } from './actors';
import { childrenLine, type StepChildrenCounts } from './explain-children';
import { priorityLine, type TaskPriorityPlace } from './explain-priority';
import { ratePausePhrase, type StepRateKey } from './explain-rate';
import type { ReasonCode, TaskState } from './machine-table';
import { scheduleOriginPhrase } from './schedule-origin';
import { clock, duration, moment } from './time-phrases';
import type { Transition } from './transition';

export type { StepChildrenCounts } from './explain-children';
export type { TaskPriorityPlace } from './explain-priority';
export type { StepRateKey } from './explain-rate';

/** Something that happened to a task without being an edge (e.g. a cancel that came too late, R14). */
export interface ExplanationNote {
  readonly at: Date;
  readonly step: string;
  readonly text: string;
}

/** A workflow's history told as a narrative (R27). */
export interface Explanation {
  /** One line per edge, oldest first. */
  readonly lines: readonly string[];
  /** Each step's current state, the most recently changed first: "publish cancelled, render succeeded". */
  readonly summary: string;
  /** The workflow's current state (the `to` of its last workflow row), if any rows exist. */
  readonly workflowState: string | null;
  /**
   * One line per step waiting for its child workflows, with their counts by state (R48):
   * "publish-each: awaiting 12 child workflows of publish-to-platform: 8 succeeded, …".
   */
  readonly children: readonly string[];
  /**
   * One line per queued task with a priority (R49), with the queued tasks it jumps:
   * "publish: priority 120 s: jumps 43 older queued tasks of queue "network"".
   */
  readonly priority: readonly string[];
  /** Lines and summary as one text. */
  readonly text: string;
}

/**
 * Renders transition rows (task and workflow rows of one workflow, in log order) as a
 * narrative: "render: leased by host/41/ab12 (attempt 1)", "render: failed (timeout: …),
 * retry at 10:00:07", …, and a one-line summary. `children` are the counts of the steps that
 * started child workflows: a step still waiting for them gets a line with them. `priorities`
 * are the queued tasks with a priority (R49) and what they jump: a line each. `rates` are
 * the rate limits its steps spend (R51): a throttled retry of one says it paused the key.
 */
export function explain(
  transitions: readonly Transition[],
  notes: readonly ExplanationNote[] = [],
  children: readonly StepChildrenCounts[] = [],
  priorities: readonly TaskPriorityPlace[] = [],
  rates: readonly StepRateKey[] = [],
): Explanation {
  // Database time first; rows of one transaction share it, so their log id breaks the tie.
  const ordered = [...transitions].sort(
    (a, b) => a.at.getTime() - b.at.getTime() || compareIds(a.id, b.id),
  );
  const entries = [
    ...ordered.map((row) => ({
      at: row.at,
      line: `${clock(row.at)} ${row.step ?? 'workflow'}: ${describe(row)}${ratePausePhrase(row, rates)}`,
    })),
    ...notes.map((note) => ({ at: note.at, line: `${clock(note.at)} ${note.step}: ${note.text}` })),
  ];
  // Notes go after the edges of the same instant (stable sort keeps the log order).
  const lines = entries.sort((a, b) => a.at.getTime() - b.at.getTime()).map((entry) => entry.line);
  const lastByStep = new Map<string, Transition>();
  let workflowState: string | null = null;
  for (const row of ordered) {
    if (row.step === null) workflowState = row.to;
    else {
      lastByStep.delete(row.step);
      lastByStep.set(row.step, row);
    }
  }
  // A queued step that is not due yet says until when (a retry's backoff, a delay, a snooze).
  const summary = [...lastByStep.values()]
    .reverse()
    .map(
      (row) =>
        `${row.step} ${row.to}${row.to === 'queued' ? due(row) : row.to === 'waiting' ? ` for ${waitPhrase(row)}` : ''}`,
    )
    .join(', ');
  const closing = workflowState === null ? summary : `workflow ${workflowState}: ${summary}`;
  const waiting = children.flatMap((counts) => {
    const state = lastByStep.get(counts.step)?.to;
    const line = state === undefined ? null : childrenLine(state as TaskState, counts);
    return line === null ? [] : [line];
  });
  return {
    lines,
    summary,
    workflowState,
    children: waiting,
    priority: priorities.map(priorityLine),
    text: [...lines, ...waiting, ...priorities.map(priorityLine), closing].join('\n'),
  };
}

function describe(row: Transition): string {
  if (row.step === null) {
    return row.from === null
      ? `accepted (${row.to})${scheduleOriginPhrase(row.detail)}`
      : `${row.from} → ${row.to} (${row.reason.replaceAll('_', ' ')})`;
  }
  const by = byActor(row.actor);
  const error =
    row.errorCategory === null
      ? ''
      : ` (${row.errorCategory}${row.errorSummary ? `: ${row.errorSummary}` : ''})`;
  const retryAt =
    typeof row.detail?.runAt === 'string' ? ` retry at ${clock(new Date(row.detail.runAt))}` : '';
  const phrases: Record<ReasonCode, () => string> = {
    submitted: () =>
      row.to === 'pending'
        ? 'accepted, waiting for upstream steps'
        : row.to === 'waiting'
          ? `accepted, waiting for ${waitPhrase(row)}`
          : `accepted and queued${delayed(row, 'after acceptance')}`,
    upstream_succeeded: () =>
      `upstream steps succeeded, queued${delayed(row, 'after its upstream steps')}`,
    cancelled_before_start: () =>
      `cancelled before start${by}${operatorReason(row)}${typeof row.detail?.cascadedFrom === 'string' ? ` (after ${row.detail.cascadedFrom} was cancelled)` : ''}`,
    lease_acquired: () => `leased${by} (attempt ${row.attempt})`,
    deadline_exceeded_before_start: () => 'deadline passed before it started: dead',
    completed: () => 'succeeded',
    retry_scheduled: () => `failed${error},${retryAt}${askedWait(row)}`,
    lease_expired: () =>
      typeof row.detail?.evidence === 'string'
        ? `lease expired after the effect was accepted (evidence ${row.detail.evidence}): queued again to ask for its outcome, not to resubmit${retryAt ? ` (${retryAt.trim()})` : ''}`
        : row.to === 'cancelled'
          ? 'lease expired with no effect started: cancelled'
          : `lease expired, queued again${retryAt ? ` (${retryAt.trim()})` : ''}`,
    worker_shutdown: () => `released at shutdown${by} before any side effect, queued again`,
    non_retryable_error: () => `failed${error}, not retryable: dead`,
    attempts_exhausted: () => `failed${error} on attempt ${row.attempt}, the last allowed: dead`,
    lease_expired_effect_uncertain: () =>
      'lease expired after its effect started: effect uncertain, dead (needs a human)',
    deadline_exceeded: () => `deadline exceeded${error}: dead`,
    submitted_awaiting_receipt: () => 'effect submitted, lease released, awaiting receipt',
    cancel_requested: () => `cancel requested${by}${operatorReason(row)}`,
    cancel_confirmed: () => `cancel confirmed${by}: cancelled`,
    cancel_after_submit: () =>
      `cancel came too late, the effect was already submitted: ${row.to.replaceAll('_', ' ')}`,
    receipt_confirmed: () => 'receipt confirmed: succeeded',
    receipt_rejected: () =>
      `receipt rejected${error}: ${row.to === 'dead' ? 'dead' : `queued again,${retryAt}`}`,
    receipt_timeout: () =>
      `no receipt in time: ${row.to === 'dead' ? 'dead' : `queued again,${retryAt}`}`,
    manual_replay: () => `replayed${by}${operatorReason(row)}${waitsAgain(row)}`,
    bulk_requeue: () => `requeued in bulk${by}${operatorReason(row)}${waitsAgain(row)}`,
    snoozed: () =>
      `snoozed until ${typeof row.detail?.runAt === 'string' ? clock(new Date(row.detail.runAt)) : '?'}${typeof row.detail?.reason === 'string' ? `: ${row.detail.reason}` : ''} (the attempt is not counted)`,
    event_awaited: () => `upstream steps succeeded, waiting for ${waitPhrase(row)}`,
    event_received: () =>
      `event received${by}${operatorReason(row)}${typeof row.detail?.eventId === 'string' ? ` (event ${row.detail.eventId})` : ''}, succeeded with its payload`,
    event_timeout: () =>
      row.to === 'dead'
        ? 'no event came before the wait gave up: dead'
        : 'no event came before the wait gave up: succeeded with its declared onTimeout output',
    cancelled_while_waiting: () =>
      `cancelled while waiting for its event${by}${operatorReason(row)}`,
    step_input_failed: () =>
      `a function the engine evaluates for it (an event key, a map's list or a child's input) failed${error}: dead`,
    children_started: () =>
      `started ${typeof row.detail?.children === 'number' ? `${row.detail.children} ` : ''}child workflows${typeof row.detail?.workflow === 'string' ? ` of ${row.detail.workflow}` : ''}, awaiting them`,
    children_succeeded: () =>
      row.detail?.total === 0
        ? 'no child workflows to await: succeeded'
        : `child workflows finished${childCounts(row)}: succeeded`,
    children_failed: () =>
      `child workflows failed${childCounts(row)}: dead, the unfinished ones cancelled`,
    children_cancelled: () => `child workflows stopped${childCounts(row)}: cancelled`,
    superseded: () =>
      `superseded by workflow ${typeof row.detail?.supersededBy === 'string' ? row.detail.supersededBy : '?'} (debounce) before it started: cancelled`,
  };
  return phrases[row.reason]();
}

/**
 * Why a retry waits as long as it does, from its edge's detail (R51): ": throttled, the step
 * asked to wait 30 s" when the wait replaced the backoff, else that it was the backoff's floor.
 */
function askedWait(row: Transition): string {
  const asked = row.detail?.retryAfterMs;
  if (typeof asked !== 'number') return '';
  const seconds = `${asked / 1_000} s`;
  return row.errorCategory === 'throttled'
    ? `: throttled, the step asked to wait ${seconds}`
    : `: the step asked to wait at least ${seconds}, the backoff on top`;
}

/** " (8 succeeded, 1 failed, tolerated 1)" from a children edge's detail. */
function childCounts(row: Transition): string {
  const detail = row.detail ?? {};
  const count = (key: string) => (typeof detail[key] === 'number' ? (detail[key] as number) : 0);
  if (typeof detail.total !== 'number') return '';
  const parts = [`${count('succeeded')} of ${count('total')} succeeded`];
  if (count('failed') > 0) parts.push(`${count('failed')} failed`);
  if (count('tolerated') > 0) parts.push(`tolerated ${count('tolerated')}`);
  return ` (${parts.join(', ')})`;
}

function byActor(actor: string): string {
  try {
    const parsed = parseActor(actor);
    return parsed.name === undefined ? ` by ${parsed.kind}` : ` by ${parsed.name}`;
  } catch {
    return ` by ${actor}`;
  }
}

function operatorReason(row: Transition): string {
  const reason = row.detail?.operatorReason;
  return typeof reason === 'string' ? `: "${reason}"` : '';
}

/** Log ids are increasing integers (as strings); compare them as numbers when they are. */
function compareIds(a: string, b: string): number {
  if (/^\d+$/.test(a) && /^\d+$/.test(b))
    return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
  return 0;
}

/** When a queued row's task is due, from its edge's detail: " (due 09:00:00)", or "". */
function due(row: Transition): string {
  const runAt = dueAt(row);
  return runAt === null ? '' : ` (due ${clock(runAt)})`;
}

function dueAt(row: Transition): Date | null {
  if (typeof row.detail?.runAt === 'string') return new Date(row.detail.runAt);
  if (typeof row.detail?.delayMs === 'number')
    return new Date(row.at.getTime() + row.detail.delayMs);
  return null;
}

/** ", due 09:00:00 (delayed 24 h after …)" for an edge that queued a delayed step (R36). */
function delayed(row: Transition, after: string): string {
  const runAt = dueAt(row);
  if (runAt === null || typeof row.detail?.delayMs !== 'number') {
    return runAt === null ? '' : `, due ${clock(runAt)}`;
  }
  return `, due ${clock(runAt)} (delayed ${duration(row.detail.delayMs)} ${after})`;
}

/**
 * What an edge into `waiting` waits for, from its detail (R42): "note.approved (key n1) since
 * 10:02:00, gives up Thu 2026-12-03 10:02:00".
 */
function waitPhrase(row: Transition): string {
  const detail = row.detail ?? {};
  const name = typeof detail.eventName === 'string' ? detail.eventName : 'its event';
  const key =
    typeof detail.eventKey === 'string'
      ? ` (key ${detail.eventKey})`
      : typeof detail.keyError === 'string'
        ? ` (its key could not be computed: ${detail.keyError}; no event can match)`
        : '';
  const gives =
    typeof detail.timeoutAt === 'string'
      ? new Date(detail.timeoutAt)
      : typeof detail.timeoutMs === 'number'
        ? new Date(row.at.getTime() + detail.timeoutMs)
        : null;
  const timeoutAt = gives === null ? '' : `, gives up ${moment(gives, row.at)}`;
  return `${name}${key} since ${clock(row.at)}${timeoutAt}`;
}

/** ", waiting again for …" for a replay that made an event step wait again (R39). */
function waitsAgain(row: Transition): string {
  return row.to === 'waiting' ? `, waiting again for ${waitPhrase(row)}` : '';
}
