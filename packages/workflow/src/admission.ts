import { type ConcurrencyKey, concurrencyOf, type TaskConcurrency } from './concurrency-key';
import type { Debounce } from './debounce';
import type { WorkflowDefinition } from './define-workflow';
import { keyTextProblem, textStorageProblem } from './key-text';
import { rateOf, type TaskRate } from './rate-limit';
import { utf8Length } from './utf8-length';

export { textStorageProblem } from './key-text';

/** Stable codes for everything refused at admission (R34). Nothing is written for any of them. */
export const admissionErrorCodes = [
  'unknown_workflow',
  'invalid_input',
  'input_too_large',
  'unstorable_string',
  'invalid_idempotency_key',
  /** A submit's `delayMs` or `runAt` out of range, or both given (R36). */
  'invalid_delay',
  /** A submit's `priority` is not an integer of seconds within `priorityLimits` (R49). */
  'invalid_priority',
  /** The definition's debounce key function threw or gave no storable, non-empty string (R52, R58). */
  'invalid_debounce_key',
  /** A step's concurrency key function threw or gave no storable, non-empty string (R50, R58). */
  'invalid_concurrency_key',
  /** A step's rate limit key function threw or gave no storable, non-empty string (R51, R58). */
  'invalid_rate_limit_key',
  /** A submit's attributes are not at most 16 bounded keys of strings, numbers or booleans (R55). */
  'invalid_attributes',
  /** The definition's attributes function threw or returned attributes out of bounds (R55, R58). */
  'invalid_definition_attributes',
  /** Two sources give one attribute key different values, or together hold over 16 keys (R55). */
  'conflicting_attributes',
] as const;
export type AdmissionErrorCode = (typeof admissionErrorCodes)[number];

export interface AdmissionError {
  readonly code: AdmissionErrorCode;
  readonly message: string;
  /** Where in the input, for schema failures and unstorable strings. */
  readonly path?: readonly (string | number)[];
}

export interface AdmissionLimits {
  /** Largest input, as UTF-8 JSON; larger payloads are passed by reference (`payloadRef`, R30). */
  readonly maxInputBytes: number;
  readonly maxIdempotencyKeyLength: number;
}

export const defaultAdmissionLimits: AdmissionLimits = Object.freeze({
  maxInputBytes: 256 * 1024,
  maxIdempotencyKeyLength: 512,
});

export type Admission =
  | {
      readonly ok: true;
      readonly input: unknown;
      /** The input as JSON, as it was measured against the size limit (and is stored). */
      readonly inputJson: string;
      readonly idempotencyKey: string | null;
      /** The definition's debounce key of this input (R52), null without a debounce. */
      readonly debounceKey: string | null;
      /** Each step's concurrency slot (R50), in the definition's step order; null: none. */
      readonly concurrency: readonly (TaskConcurrency | null)[];
      /** What each step's task spends of its rate limit (R51), in step order; null: none. */
      readonly rate: readonly (TaskRate | null)[];
    }
  | { readonly ok: false; readonly error: AdmissionError };

/**
 * Validates a submission before anything is written: the schema (zod parses once, the
 * parsed value is what gets stored), size, strings that Postgres JSONB cannot store, and
 * the idempotency key (the caller's, else the definition's function).
 */
export function checkAdmission(
  definition: WorkflowDefinition,
  rawInput: unknown,
  callerKey: string | undefined,
  limits: AdmissionLimits = defaultAdmissionLimits,
): Admission {
  const parsed = definition.input.safeParse(rawInput);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return refuse(
      'invalid_input',
      `input does not match the schema of "${definition.name}": ${parsed.error.issues
        .map((item) => `${item.path.join('.') || '(root)'}: ${item.message}`)
        .join('; ')}`,
      issue?.path.filter((part) => typeof part !== 'symbol'),
    );
  }
  const unstorable = findUnstorableString(parsed.data, []);
  if (unstorable !== null) {
    return refuse(
      'unstorable_string',
      unstorable.nesting
        ? `input is ${unstorable.why}, which Postgres cannot store`
        : `input has a string Postgres cannot store (${unstorable.why})`,
      unstorable.path,
    );
  }
  const json = JSON.stringify(parsed.data) ?? 'null';
  const bytes = utf8Length(json);
  if (bytes > limits.maxInputBytes) {
    return refuse(
      'input_too_large',
      `input is ${bytes} bytes as JSON, over the limit of ${limits.maxInputBytes} bytes: put large content in storage and pass a reference (storage URI + version) instead, made with payloadRef({ uri, version }) from @causeway/workflow and checked by its payloadReference schema`,
    );
  }
  let key: string | null = callerKey ?? null;
  if (key === null && definition.idempotencyKey !== null) {
    try {
      key = definition.idempotencyKey(parsed.data);
    } catch (error) {
      return refuse(
        'invalid_idempotency_key',
        `the idempotency key function threw: ${String(error)}`,
      );
    }
  }
  if (key !== null) {
    const keyProblem = idempotencyKeyProblem(key, limits.maxIdempotencyKeyLength);
    if (keyProblem !== null) return refuse('invalid_idempotency_key', keyProblem);
  }
  let debounceKey: string | null = null;
  if (definition.debounce !== null) {
    const found = debounceKeyOf(definition.debounce, parsed.data);
    if (!found.ok) return refuse('invalid_debounce_key', found.problem);
    debounceKey = found.key;
  }
  const concurrency: (TaskConcurrency | null)[] = [];
  for (const step of definition.steps) {
    if (step.concurrency === undefined) {
      concurrency.push(null);
      continue;
    }
    const found = concurrencyOf(step.concurrency as ConcurrencyKey, {
      input: parsed.data,
      workflowName: definition.name,
      step: step.name,
    });
    if (!found.ok) return refuse('invalid_concurrency_key', found.problem);
    concurrency.push(found.slot);
  }
  const rate: (TaskRate | null)[] = [];
  for (const step of definition.steps) {
    if (step.rateLimit === undefined) {
      rate.push(null);
      continue;
    }
    const found = rateOf(step.rateLimit, {
      input: parsed.data,
      workflowName: definition.name,
      step: step.name,
    });
    if (!found.ok) return refuse('invalid_rate_limit_key', found.problem);
    rate.push(found.rate);
  }
  return {
    ok: true,
    input: parsed.data,
    inputJson: json,
    idempotencyKey: key,
    debounceKey,
    concurrency,
    rate,
  };
}

/** What is wrong with an idempotency key (a submit's or an event's), or null. */
export function idempotencyKeyProblem(key: unknown, maxLength: number): string | null {
  return keyTextProblem('the idempotency key', key, maxLength);
}

/**
 * Why `value` cannot be stored as Postgres JSONB (a NUL or a lone surrogate in a string or
 * key, nesting past `maxJsonNesting`, or a value JSON cannot express), or null when it can. Used for inputs and outputs.
 */
export function jsonStorageProblem(value: unknown): string | null {
  const found = findUnstorableString(value, []);
  if (found !== null) return `${found.why} at ${found.path.join('.') || '(root)'}`;
  try {
    JSON.stringify(value);
  } catch (error) {
    return `not JSON: ${String(error)}`;
  }
  return null;
}

/**
 * The deepest nesting of arrays and objects an input, output or payload may have. Postgres
 * (its JSON parser has a stack limit) and JSON.stringify give up somewhere past 10,000 levels,
 * at a depth that depends on their stacks; a fixed limit well below makes the refusal the same
 * everywhere.
 */
export const maxJsonNesting = 1_000;

/**
 * The first string or key (in document order) Postgres cannot store, or nesting past
 * `maxJsonNesting`. Walks with its own stack: a deep value must get an answer, not overflow
 * the call stack.
 */
function findUnstorableString(
  root: unknown,
  rootPath: (string | number)[],
): { why: string; path: (string | number)[]; nesting?: true } | null {
  type Pending =
    | { readonly value: unknown; readonly path: (string | number)[] }
    | { readonly key: string; readonly value: unknown; readonly path: (string | number)[] };
  const stack: Pending[] = [{ value: root, path: rootPath }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { value, path } = next;
    if ('key' in next) {
      const keyReason = textStorageProblem(next.key);
      if (keyReason !== null) return { why: `${keyReason} in a key`, path };
    }
    if (typeof value === 'string') {
      const why = textStorageProblem(value);
      if (why !== null) return { why, path };
    } else if (typeof value === 'object' && value !== null) {
      if (path.length - rootPath.length >= maxJsonNesting) {
        return {
          why: `nesting deeper than ${maxJsonNesting} levels`,
          path: rootPath,
          nesting: true,
        };
      }
      // Pushed last to first, so they are looked at first to last.
      const children: Pending[] = Array.isArray(value)
        ? value.map((item, index) => ({ value: item, path: [...path, index] }))
        : Object.entries(value).map(([key, item]) => ({ key, value: item, path: [...path, key] }));
      for (let index = children.length - 1; index >= 0; index -= 1) {
        stack.push(children[index] as Pending);
      }
    }
  }
  return null;
}

function refuse(
  code: AdmissionErrorCode,
  message: string,
  path?: readonly (string | number)[],
): Admission {
  return { ok: false, error: path === undefined ? { code, message } : { code, message, path } };
}

/** How far ahead a submit may be delayed, and how far in the past a `runAt` may lie (skew). */
export const submitDelayLimits = Object.freeze({
  maxMs: 366 * 24 * 3_600_000,
  pastToleranceMs: 5 * 60_000,
});

/**
 * What is wrong with a submit's delay (R36, R34), or null: at most one of `delayMs` (an
 * integer of milliseconds) and `runAt` (a valid date), `delayMs` within the limit. How far a
 * `runAt` lies from now is for the database's clock to say (R11): `submitRunAtProblem`.
 */
export function submitDelayProblem(options: {
  readonly delayMs?: unknown;
  readonly runAt?: unknown;
}): string | null {
  const { delayMs, runAt } = options;
  if (delayMs !== undefined && runAt !== undefined) return 'give delayMs or runAt, not both';
  const { maxMs } = submitDelayLimits;
  if (delayMs !== undefined) {
    if (
      typeof delayMs !== 'number' ||
      !Number.isInteger(delayMs) ||
      delayMs < 0 ||
      delayMs > maxMs
    ) {
      return `delayMs must be an integer from 0 to ${maxMs}, got ${String(delayMs)}`;
    }
  }
  if (runAt !== undefined && (!(runAt instanceof Date) || Number.isNaN(runAt.getTime()))) {
    return 'runAt must be a valid Date';
  }
  return null;
}

/**
 * What is wrong with a submit's `runAt` at database time `nowMs` (R11), or null: not in the
 * past beyond the tolerance, nor beyond the limit ahead. The admission statement makes the
 * same comparison in SQL, in whole milliseconds, so its refusal and this message agree.
 */
export function submitRunAtProblem(runAtMs: number, nowMs: number): string | null {
  const { maxMs, pastToleranceMs } = submitDelayLimits;
  const runAt = new Date(runAtMs).toISOString();
  const now = new Date(nowMs).toISOString();
  if (runAtMs < nowMs - pastToleranceMs) {
    return `runAt ${runAt} is in the past: more than ${pastToleranceMs} ms before the database time ${now}`;
  }
  if (runAtMs > nowMs + maxMs) {
    return `runAt ${runAt} is more than ${maxMs} ms after the database time ${now}`;
  }
  return null;
}

/** The longest debounce key, in characters, like an idempotency key's. */
export const maxDebounceKeyLength = 512;

/**
 * The debounce key of an admitted input, or why there is none (R58: a key function that throws
 * or returns something that is not a storable, non-empty string refuses the submit).
 */
export function debounceKeyOf(
  debounce: Debounce,
  input: unknown,
): { readonly ok: true; readonly key: string } | { readonly ok: false; readonly problem: string } {
  let key: unknown;
  try {
    key = debounce.key(input);
  } catch (error) {
    return { ok: false, problem: `the debounce key function threw: ${String(error)}` };
  }
  const problem = idempotencyKeyProblem(key, maxDebounceKeyLength);
  if (problem !== null) {
    return { ok: false, problem: problem.replace('the idempotency key', 'the debounce key') };
  }
  return { ok: true, key: key as string };
}
