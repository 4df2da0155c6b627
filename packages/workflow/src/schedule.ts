import type { z } from 'zod';
import { checkAdmission, jsonStorageProblem } from './admission';
import { canonicalTimeZone, cronProblems } from './cron';
import { deepFreeze } from './deep-freeze';
import { DefinitionError, type WorkflowDefinition } from './define-workflow';

/**
 * What a schedule does with the ticks it missed while no scheduler ran (R40): `latest` submits
 * one workflow for the most recent, `all` one per missed tick (the most recent
 * `catchUpLimit`), `none` none (only a tick found on time is submitted).
 */
export const catchUpModes = ['latest', 'all', 'none'] as const;
export type CatchUp = (typeof catchUpModes)[number];

/** The most missed ticks `catchUp: 'all'` submits at once; older ones are skipped. */
export const catchUpLimit = 100;

export interface ScheduleOptions<TSchema extends z.ZodType = z.ZodType> {
  readonly name: string;
  /** The workflow to submit on each tick: its definition (the input is checked now) or its name. */
  readonly workflow: WorkflowDefinition<TSchema> | string;
  /** Five fields: minute hour day-of-month month day-of-week (`0 7 * * *`). */
  readonly cron: string;
  /** IANA time zone the cron is read in (`Europe/Berlin`). Default `UTC`. */
  readonly timezone?: string;
  /** The input of every workflow it submits. Default `{}`. */
  readonly input?: z.input<TSchema>;
  /** Default `latest`. */
  readonly catchUp?: CatchUp;
}

/** A schedule as declared in code: checked and frozen. */
export interface ScheduleDefinition {
  readonly name: string;
  /** The workflow's name. */
  readonly workflow: string;
  readonly cron: string;
  /** The canonical IANA name. */
  readonly timezone: string;
  /** As given (JSON); the workflow's schema parses it at each submit, like any input. */
  readonly input: unknown;
  readonly catchUp: CatchUp;
}

const namePattern = /^[a-z][a-z0-9_-]*$/;
const maxNameLength = 100;

/**
 * Declares a schedule (R40). A cron that does not parse or never fires, an unknown time zone,
 * an input the workflow's schema refuses, or a bad `catchUp` is a DefinitionError now, when the
 * module loads.
 */
export function schedule<TSchema extends z.ZodType>(
  options: ScheduleOptions<TSchema>,
): ScheduleDefinition {
  const subject = `schedule ${JSON.stringify(options.name)}`;
  const problems: string[] = [];
  if (
    typeof options.name !== 'string' ||
    !namePattern.test(options.name) ||
    options.name.length > maxNameLength
  ) {
    problems.push(
      `name must be lowercase letters, digits, "_" or "-", start with a letter, and be at most ${maxNameLength} characters (got ${JSON.stringify(options.name)})`,
    );
  }
  const definition =
    typeof options.workflow === 'object' && options.workflow !== null ? options.workflow : null;
  const workflow = typeof options.workflow === 'string' ? options.workflow : definition?.name;
  if (typeof workflow !== 'string' || workflow.length === 0) {
    problems.push('workflow must be a workflow definition or its name');
  }
  const timezone = canonicalTimeZone(options.timezone ?? 'UTC');
  if (timezone === null) {
    problems.push(`timezone ${JSON.stringify(options.timezone)} is not an IANA time zone`);
  } else {
    problems.push(...cronProblems(options.cron, timezone));
  }
  const catchUp = options.catchUp ?? 'latest';
  if (!(catchUpModes as readonly unknown[]).includes(catchUp)) {
    problems.push(
      `catchUp must be one of ${catchUpModes.join(', ')}, got ${JSON.stringify(catchUp)}`,
    );
  }
  const input = options.input === undefined ? {} : options.input;
  problems.push(...inputProblems(definition, input));
  if (problems.length > 0) throw new DefinitionError(subject, problems);
  return Object.freeze({
    name: options.name,
    workflow: workflow as string,
    cron: options.cron.trim(),
    timezone: timezone as string,
    input: deepFreeze(JSON.parse(JSON.stringify(input)) as unknown),
    catchUp,
  });
}

function inputProblems(definition: WorkflowDefinition | null, input: unknown): string[] {
  const storage = jsonStorageProblem(input);
  if (storage !== null) return [`input cannot be stored: ${storage}`];
  if (JSON.stringify(input) === undefined) return ['input must be a JSON value'];
  if (definition === null) return [];
  // The schedule's own key stands in for the definition's key function (never called here).
  const admission = checkAdmission(definition, input, 'schedule');
  return admission.ok ? [] : [`input: ${admission.error.message}`];
}

/** The idempotency key of the workflow a schedule submits for a tick (R40). */
export function scheduleTickKey(name: string, tick: Date): string {
  return `schedule:${name}:${tick.toISOString()}`;
}

/** The idempotency key of a workflow an operator triggered by hand (`id` is the trigger's own). */
export function scheduleManualKey(name: string, id: string): string {
  return `schedule:${name}:manual:${id}`;
}

/**
 * Which of the due ticks (oldest first, at most `catchUpLimit`) a scheduler submits, by the
 * schedule's `catchUp`. A tick found within `onTimeMs` of its time is on time, not missed: even
 * `none` submits it.
 */
export function ticksToSubmit(
  catchUp: CatchUp,
  due: readonly Date[],
  now: Date,
  onTimeMs: number,
): Date[] {
  const latest = due.at(-1);
  if (latest === undefined) return [];
  switch (catchUp) {
    case 'all':
      return due.slice(-catchUpLimit);
    case 'latest':
      return [latest];
    case 'none':
      return now.getTime() - latest.getTime() <= onTimeMs ? [latest] : [];
  }
}

/** Duplicate names are a definition error, like duplicate workflow names. */
export function scheduleRegistry(
  schedules: readonly ScheduleDefinition[],
): ReadonlyMap<string, ScheduleDefinition> {
  const registry = new Map<string, ScheduleDefinition>();
  const duplicates = new Set<string>();
  for (const definition of schedules) {
    if (registry.has(definition.name)) duplicates.add(definition.name);
    registry.set(definition.name, definition);
  }
  if (duplicates.size > 0) {
    throw new DefinitionError(
      'schedule registry',
      [...duplicates].map((name) => `two schedules are named "${name}"`),
    );
  }
  return registry;
}
