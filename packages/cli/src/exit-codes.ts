/**
 * The exit codes of `causeway`: a contract for scripts (docs/cli.md), like the API's error
 * codes. Add kinds; never renumber one.
 */
export const exitCodes = Object.freeze({
  /** The command did what it was asked. */
  ok: 0,
  /** The server failed in a way none of the kinds below names (INTERNAL_SERVER_ERROR, a 5xx, an answer that is not GraphQL). */
  server: 1,
  /** The command line is wrong (unknown command or option, missing argument, bad JSON), or the server refused the values as input (BAD_USER_INPUT). */
  usage: 2,
  /** No workflow, task or schedule has the id or name (NOT_FOUND, or a query answering null). */
  not_found: 3,
  /** The operation does not apply in the current state: a replay of a task that is not dead, a cancel of a finished task, a full queue (CONFLICT, QUEUE_FULL, a `refusal`). */
  refused: 4,
  /** No valid operator token (UNAUTHENTICATED, HTTP 401). */
  unauthenticated: 5,
  /** The server could not be reached, did not answer in time, closed a stream, or is not a GraphQL endpoint. */
  connection: 6,
});

export type ExitKind = keyof typeof exitCodes;

/**
 * An error the CLI reports and exits with. `code` is stable: the API's `extensions.code` when
 * the server answered one, a refusal code (e.g. `terminal_state`), or one of the CLI's own
 * (`USAGE`, `CONNECTION_FAILED`, `NOT_GRAPHQL`, `STREAM_CLOSED`…).
 */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    readonly kind: ExitKind,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export function usageError(message: string): CliError {
  return new CliError('usage', 'USAGE', message);
}

/** The exit kind for an API error code (`extensions.code`). */
export function kindOfApiCode(code: string | undefined): ExitKind {
  switch (code) {
    case 'NOT_FOUND':
      return 'not_found';
    case 'CONFLICT':
    case 'QUEUE_FULL':
      return 'refused';
    case 'UNAUTHENTICATED':
      return 'unauthenticated';
    case 'BAD_USER_INPUT':
      return 'usage';
    default:
      return 'server';
  }
}
