import { CliError, kindOfApiCode } from './exit-codes';

/** Where the API is and who asks. */
export interface Endpoint {
  /** The GraphQL endpoint, e.g. `http://127.0.0.1:4000/graphql`. */
  readonly url: string;
  /** The operator's bearer token, if any (mutations need one; reads do too unless the server is loopback-only). */
  readonly token: string | undefined;
  /** How long one request may take before it counts as a connection error. */
  readonly timeoutMs: number;
}

export interface GraphQLErrorBody {
  readonly message: string;
  readonly extensions?: { readonly code?: string } & Record<string, unknown>;
}

export interface GraphQLBody<T> {
  readonly data?: T | null;
  readonly errors?: readonly GraphQLErrorBody[];
}

export function requestHeaders(endpoint: Endpoint, accept: string): Record<string, string> {
  return {
    accept,
    'content-type': 'application/json',
    ...(endpoint.token === undefined ? {} : { authorization: `Bearer ${endpoint.token}` }),
  };
}

/** One query or mutation over HTTP POST; any failure becomes a CliError of its kind. */
export async function graphqlRequest<T>(
  endpoint: Endpoint,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<T> {
  const { response, settled } = await open(
    endpoint,
    'application/graphql-response+json, application/json',
    { query, variables },
  );
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    throw connectionError(endpoint, error);
  } finally {
    settled();
  }
  const body = safeJson(text) as GraphQLBody<T> | undefined;
  if (typeof body !== 'object' || body === null || !('data' in body || 'errors' in body)) {
    if (response.status >= 500) {
      throw new CliError(
        'server',
        `HTTP_${response.status}`,
        `the server failed: HTTP ${response.status}`,
      );
    }
    throw notGraphQL(endpoint, response.status);
  }
  const first = body.errors?.[0];
  if (first !== undefined) throw errorFromBody(first, response.status);
  if (response.status >= 400 || body.data === undefined || body.data === null) {
    throw new CliError(
      'server',
      'UNEXPECTED_RESPONSE',
      `the server answered HTTP ${response.status}`,
    );
  }
  return body.data;
}

/**
 * POSTs a GraphQL body and waits for the response's headers. The timeout runs until the
 * caller calls `settled()` (a request: once its body is read; a stream: once it opened).
 * A network failure or the timeout is a connection error; HTTP 401 is unauthenticated.
 */
export async function open(
  endpoint: Endpoint,
  accept: string,
  body: unknown,
  signal?: AbortSignal,
): Promise<{ response: Response; settled: () => void }> {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException('timed out', 'TimeoutError')),
    endpoint.timeoutMs,
  );
  const settled = () => clearTimeout(timer);
  const forward = () => controller.abort(signal?.reason);
  if (signal?.aborted) forward();
  signal?.addEventListener('abort', forward, { once: true });
  let response: Response;
  try {
    response = await fetch(endpoint.url, {
      method: 'POST',
      headers: requestHeaders(endpoint, accept),
      body: JSON.stringify(body),
      signal: controller.signal,
    });
  } catch (error) {
    settled();
    throw connectionError(endpoint, error);
  }
  if (response.status === 401) {
    const text = await response.text().catch(() => '');
    settled();
    const first = (safeJson(text) as GraphQLBody<unknown> | undefined)?.errors?.[0];
    throw errorFromBody(
      {
        message: first?.message ?? 'the server wants a valid operator token',
        extensions: { code: 'UNAUTHENTICATED' },
      },
      401,
    );
  }
  if (response.status === 404 || response.status === 405) {
    settled();
    throw notGraphQL(endpoint, response.status);
  }
  return { response, settled };
}

/** A GraphQL error as the CLI reports it, with the advice an operator needs. */
export function errorFromBody(error: GraphQLErrorBody, status: number): CliError {
  const code = typeof error.extensions?.code === 'string' ? error.extensions.code : undefined;
  const kind = kindOfApiCode(code);
  const message =
    kind === 'unauthenticated'
      ? `${error.message} (pass --token or set CAUSEWAY_TOKEN)`
      : kind === 'server' && code === undefined
        ? `${error.message} (HTTP ${status})`
        : error.message;
  return new CliError(kind, code ?? 'INTERNAL_SERVER_ERROR', message);
}

export function connectionError(endpoint: Endpoint, error: unknown): CliError {
  if (error instanceof CliError) return error;
  const name = (error as { name?: string }).name;
  if (name === 'TimeoutError') {
    return new CliError(
      'connection',
      'TIMEOUT',
      `${endpoint.url} did not answer within ${endpoint.timeoutMs} ms`,
    );
  }
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const detail = cause?.code ?? cause?.message ?? (error as Error).message ?? String(error);
  return new CliError('connection', 'CONNECTION_FAILED', `cannot reach ${endpoint.url}: ${detail}`);
}

function notGraphQL(endpoint: Endpoint, status: number): CliError {
  return new CliError(
    'connection',
    'NOT_GRAPHQL',
    `${endpoint.url} is not a Causeway GraphQL endpoint (HTTP ${status}); check --url`,
  );
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
