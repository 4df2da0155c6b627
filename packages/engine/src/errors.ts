import { admissionErrorCodes, eventErrorCodes } from '@causeway/workflow/internal';

/** Stable codes of everything the engine refuses. Bad input changes nothing (R34). */
export const engineErrorCodes = [
  ...admissionErrorCodes,
  ...eventErrorCodes,
  /** A capped queue's backlog is full: refused at the door instead of growing lag. */
  'queue_full',
  'not_found',
  /** The task is not in a state where the operation applies (e.g. replay of a task that is not dead). */
  'conflict',
  /** The request is malformed (empty operator name, bad time range…). */
  'invalid_request',
  /** The caller aborted before the submit committed (R6). */
  'aborted',
  /** The engine is closed. */
  'closed',
] as const;
export type EngineErrorCode = (typeof engineErrorCodes)[number];

export class EngineError extends Error {
  override readonly name = 'EngineError';
  readonly code: EngineErrorCode;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: EngineErrorCode, message: string, details?: Readonly<Record<string, unknown>>) {
    super(message);
    this.code = code;
    this.details = details;
  }
}
