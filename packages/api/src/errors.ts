import { EngineError, type EngineErrorCode, isDatabaseUnavailableError } from '@causeway/engine';
import { GraphQLError } from 'graphql';

/**
 * The stable `extensions.code` values this API answers with: a contract, like reason codes.
 * Add codes; never change what one means.
 */
export const apiErrorCodes = [
  /** The request's values are wrong (unknown workflow, input failing the schema or too large, bad cursor, page size, operator reason…). */
  'BAD_USER_INPUT',
  /** No workflow or task has the id. */
  'NOT_FOUND',
  /** The operation does not apply in the current state (e.g. replay of a task that is not dead), or a clientMutationId was reused for another request. */
  'CONFLICT',
  /** No valid bearer token: mutations need one (and every operation, if reads are private). */
  'UNAUTHENTICATED',
  /** A capped queue is full: admission refused at the door; retry later. */
  'QUEUE_FULL',
  /** Over a depth, cost, alias or token limit, checked before anything runs. */
  'QUERY_TOO_COMPLEX',
  /** The GraphQL document does not parse. */
  'GRAPHQL_PARSE_FAILED',
  /** The document does not validate against the schema (unknown field, enum literal…). */
  'GRAPHQL_VALIDATION_FAILED',
  /** The request body is over the size limit (HTTP 413). */
  'PAYLOAD_TOO_LARGE',
  /** A subscriber fell too far behind; resubscribe with `after` to resume. */
  'SUBSCRIPTION_OVERFLOW',
  /** The service is shutting down. */
  'SERVICE_UNAVAILABLE',
  /** The database cannot be reached right now (restarting, connections cut): retry shortly; nothing is lost. */
  'DATABASE_UNAVAILABLE',
  /** The client went away before the operation committed: nothing was accepted. */
  'REQUEST_ABORTED',
  /** Anything unexpected; details are logged, never sent. */
  'INTERNAL_SERVER_ERROR',
] as const;
export type ApiErrorCode = (typeof apiErrorCodes)[number];

/** The engine's codes, each mapped to one API code (exhaustive: a new engine code fails typecheck). */
const engineCodes: Readonly<Record<EngineErrorCode, ApiErrorCode>> = Object.freeze({
  unknown_workflow: 'BAD_USER_INPUT',
  invalid_input: 'BAD_USER_INPUT',
  input_too_large: 'BAD_USER_INPUT',
  unstorable_string: 'BAD_USER_INPUT',
  invalid_idempotency_key: 'BAD_USER_INPUT',
  invalid_debounce_key: 'BAD_USER_INPUT',
  invalid_concurrency_key: 'BAD_USER_INPUT',
  invalid_rate_limit_key: 'BAD_USER_INPUT',
  invalid_delay: 'BAD_USER_INPUT',
  invalid_priority: 'BAD_USER_INPUT',
  invalid_attributes: 'BAD_USER_INPUT',
  invalid_definition_attributes: 'BAD_USER_INPUT',
  conflicting_attributes: 'BAD_USER_INPUT',
  unknown_event: 'BAD_USER_INPUT',
  invalid_event_key: 'BAD_USER_INPUT',
  invalid_event_payload: 'BAD_USER_INPUT',
  payload_too_large: 'BAD_USER_INPUT',
  invalid_request: 'BAD_USER_INPUT',
  queue_full: 'QUEUE_FULL',
  not_found: 'NOT_FOUND',
  conflict: 'CONFLICT',
  aborted: 'REQUEST_ABORTED',
  closed: 'SERVICE_UNAVAILABLE',
});

/** HTTP status for codes that refuse a request before execution. */
const httpStatus: Partial<Record<ApiErrorCode, number>> = {
  UNAUTHENTICATED: 401,
  QUERY_TOO_COMPLEX: 400,
  GRAPHQL_PARSE_FAILED: 400,
  GRAPHQL_VALIDATION_FAILED: 400,
  PAYLOAD_TOO_LARGE: 413,
  DATABASE_UNAVAILABLE: 503,
};

/** An error this API raises on purpose, with its stable code. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly code: ApiErrorCode,
    message: string,
    readonly extensions: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
  }
}

export interface ErrorMappingOptions {
  /** Production strips field suggestions ("Did you mean …?") from messages. */
  readonly production: boolean;
  /** Receives every unexpected error (logged, never sent). */
  readonly onUnexpected?: (error: unknown) => void;
}

/**
 * THE mapping from anything thrown to what a client sees: one stable `extensions.code`, a
 * message written for users, never SQL, a stack or an internal message. Engine errors map by
 * their code (the engine code rides along as `extensions.reason`); GraphQL's own parse and
 * validation errors get their standard codes; anything else is INTERNAL_SERVER_ERROR.
 */
export function toGraphQLError(error: unknown, options: ErrorMappingOptions): GraphQLError {
  const graphQLError = error instanceof GraphQLError ? error : undefined;
  let original: unknown = graphQLError === undefined ? error : graphQLError.originalError;
  // A GraphQLError wrapping another (located errors): what matters is the innermost cause.
  while (original instanceof GraphQLError && original.originalError != null) {
    original = original.originalError;
  }
  const located = {
    ...(graphQLError?.nodes === undefined ? {} : { nodes: graphQLError.nodes }),
    ...(graphQLError?.source === undefined ? {} : { source: graphQLError.source }),
    ...(graphQLError?.positions === undefined ? {} : { positions: graphQLError.positions }),
    ...(graphQLError?.path === undefined ? {} : { path: graphQLError.path }),
  };
  // yoga reads `extensions.http` for the response status (and strips it from the body): keep
  // what graphql-yoga already decided (e.g. 405 for a mutation over GET), else ours.
  const givenHttp = graphQLError?.extensions?.http;
  const make = (
    code: ApiErrorCode,
    message: string,
    extra: Record<string, unknown> = {},
    status = httpStatus[code],
  ) => {
    const http =
      givenHttp ??
      (status === undefined
        ? undefined
        : code === 'UNAUTHENTICATED'
          ? { status, headers: { 'WWW-Authenticate': 'Bearer' } }
          : { status });
    return new GraphQLError(options.production ? withoutSuggestions(message) : message, {
      ...located,
      extensions: { ...extra, code, ...(http === undefined ? {} : { http }) },
    });
  };

  // Variable values that do not coerce (unknown enum value, bad DateTime, wrong type…).
  if (graphQLError !== undefined && /^Variable "\$/.test(graphQLError.message)) {
    // A request error (nothing executed): 400 under application/graphql-response+json.
    return make('BAD_USER_INPUT', graphQLError.message, {}, 400);
  }
  if (original instanceof EngineError) {
    const path = original.details?.path;
    return make(engineCodes[original.code] ?? 'INTERNAL_SERVER_ERROR', original.message, {
      reason: original.code,
      ...(Array.isArray(path) ? { inputPath: path } : {}),
    });
  }
  if (original instanceof ApiError) {
    return make(original.code, original.message, { ...original.extensions });
  }
  if (graphQLError !== undefined) {
    const given = graphQLError.extensions?.code;
    if (typeof given === 'string' && (apiErrorCodes as readonly string[]).includes(given)) {
      const { code: _code, http: _http, ...rest } = graphQLError.extensions;
      return make(given as ApiErrorCode, graphQLError.message, rest);
    }
    if (graphQLError.message.startsWith('Syntax Error')) {
      return make('GRAPHQL_PARSE_FAILED', graphQLError.message);
    }
    // Without a path it was raised before execution: validation (a literal's scalar too).
    if (
      graphQLError.path === undefined &&
      (original === undefined || original === null || original instanceof GraphQLError)
    ) {
      return make('GRAPHQL_VALIDATION_FAILED', graphQLError.message);
    }
  }
  if (isDatabaseUnavailableError(original)) {
    // Expected while the server restarts: a clear answer that says retry, not a 500.
    return make(
      'DATABASE_UNAVAILABLE',
      'The database cannot be reached right now; retry shortly.',
      {},
      503,
    );
  }
  options.onUnexpected?.(original ?? error);
  return make('INTERNAL_SERVER_ERROR', 'Unexpected error.');
}

/** graphql-js appends `Did you mean "x"?` hints, which describe the schema to a prober. */
export function withoutSuggestions(message: string): string {
  return message.replace(/ ?Did you mean [^?]*\?/g, '').trimEnd();
}
