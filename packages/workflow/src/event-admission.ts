import { defaultAdmissionLimits, jsonStorageProblem } from './admission';
import type { WorkflowDefinition, WorkflowStep } from './define-workflow';
import { eventKeyProblem, eventNameProblem } from './event-step';
import { utf8Length } from './utf8-length';

/** Stable codes for every event refused by `sendEvent` (R38). Nothing is written for any. */
export const eventErrorCodes = [
  /** No event step of any defined workflow waits for an event of this name. */
  'unknown_event',
  /** The key is empty, too long, not a string, or has characters PostgreSQL cannot store. */
  'invalid_event_key',
  /** The payload fails the schema of a step that waits for this event. */
  'invalid_event_payload',
  'payload_too_large',
] as const;
export type EventErrorCode = (typeof eventErrorCodes)[number];

/** The event steps of the given workflows, by the name of the event they wait for. */
export function eventStepsByName(
  definitions: Iterable<WorkflowDefinition>,
): ReadonlyMap<string, readonly WorkflowStep[]> {
  const byName = new Map<string, WorkflowStep[]>();
  for (const definition of definitions) {
    for (const step of definition.steps) {
      if (step.event === undefined) continue;
      const steps = byName.get(step.event.name) ?? [];
      steps.push(step);
      byName.set(step.event.name, steps);
    }
  }
  return byName;
}

export type EventAdmission =
  | { readonly ok: true; readonly payloadJson: string }
  | {
      readonly ok: false;
      readonly code: EventErrorCode | 'unstorable_string';
      readonly message: string;
    };

/**
 * Checks an event before anything is written (R38): a known name, a valid key, a payload
 * that every step waiting for this name accepts, storable and within the size limit.
 */
export function checkEvent(
  steps: ReadonlyMap<string, readonly WorkflowStep[]>,
  name: unknown,
  key: unknown,
  payload: unknown,
  maxPayloadBytes: number = defaultAdmissionLimits.maxInputBytes,
): EventAdmission {
  const nameProblem = eventNameProblem(name);
  if (nameProblem !== null) return { ok: false, code: 'unknown_event', message: nameProblem };
  const waiting = steps.get(name as string);
  if (waiting === undefined) {
    return {
      ok: false,
      code: 'unknown_event',
      message: `no event step waits for an event named ${JSON.stringify(name)}`,
    };
  }
  const keyProblem = eventKeyProblem(key);
  if (keyProblem !== null) return { ok: false, code: 'invalid_event_key', message: keyProblem };
  for (const step of waiting) {
    const schema = step.event?.payload ?? null;
    if (schema === null) continue;
    const parsed = schema.safeParse(payload);
    if (!parsed.success) {
      return {
        ok: false,
        code: 'invalid_event_payload',
        message: `the payload does not match the schema of step "${step.name}": ${parsed.error.issues
          .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
          .join('; ')}`,
      };
    }
  }
  const storage = jsonStorageProblem(payload);
  if (storage !== null || payload === undefined) {
    return {
      ok: false,
      code: 'unstorable_string',
      message: `the payload cannot be stored: ${storage ?? 'undefined is not JSON'}`,
    };
  }
  const payloadJson = JSON.stringify(payload);
  const bytes = utf8Length(payloadJson);
  if (bytes > maxPayloadBytes) {
    return {
      ok: false,
      code: 'payload_too_large',
      message: `the payload is ${bytes} bytes as JSON, over the limit of ${maxPayloadBytes} bytes: pass a reference (payloadRef) instead`,
    };
  }
  return { ok: true, payloadJson };
}

/**
 * A step's output for an event's payload: the payload as its schema parses it, or null when
 * the schema (changed since the event was sent) no longer accepts it.
 */
export function eventOutputJson(step: WorkflowStep, payload: unknown): string | null {
  const schema = step.event?.payload ?? null;
  if (schema === null) return JSON.stringify(payload);
  const parsed = schema.safeParse(payload);
  return parsed.success ? (JSON.stringify(parsed.data) ?? 'null') : null;
}
