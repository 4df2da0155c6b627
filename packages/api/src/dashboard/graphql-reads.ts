/**
 * The dashboard reads through the same GraphQL API that every other client uses, in process:
 * one operation per page, run by the server's own yoga instance (its limits, its error codes,
 * its authentication: the browser's Authorization header is passed on, so a server with
 * private reads shows nothing without a token). Its read-your-writes token is passed on too,
 * so a page read right after the operator's mutation shows it even with a lagging replica.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { YogaServerInstance } from 'graphql-yoga';
import type { ApiContext } from '../context';
import { readAfterHeader } from '../replica/read-router';

/** The page request's headers the dashboard's reads carry on. */
const passedOn = ['authorization', readAfterHeader] as const;

export type DashboardYoga = YogaServerInstance<Record<string, unknown>, ApiContext>;

/** An error as the API answered it: its stable code and its message. */
export interface ReadError {
  readonly code: string;
  readonly message: string;
}

export type ReadResult<T> =
  | { readonly ok: true; readonly data: T }
  | { readonly ok: false; readonly error: ReadError };

export interface GraphQLReader {
  read<T>(
    query: string,
    variables: Record<string, unknown>,
    from: IncomingHttpHeaders,
  ): Promise<ReadResult<T>>;
}

export function graphqlReader(yoga: DashboardYoga, endpoint: string): GraphQLReader {
  return {
    async read<T>(
      query: string,
      variables: Record<string, unknown>,
      from: IncomingHttpHeaders,
    ): Promise<ReadResult<T>> {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json',
      };
      for (const name of passedOn) {
        const value = from[name];
        if (typeof value === 'string') headers[name] = value;
      }
      const response = await yoga.fetch(`http://dashboard.invalid${endpoint}`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ query, variables }),
      });
      const body = (await response.json()) as {
        data?: T | null;
        errors?: { message: string; extensions?: { code?: unknown } }[];
      };
      const [first] = body.errors ?? [];
      if (first !== undefined || body.data === undefined || body.data === null) {
        const code = first?.extensions?.code;
        return {
          ok: false,
          error: {
            code: typeof code === 'string' ? code : 'INTERNAL_SERVER_ERROR',
            message: first?.message ?? `the API answered HTTP ${response.status} without data`,
          },
        };
      }
      return { ok: true, data: body.data };
    },
  };
}

/** The HTTP status of a page whose read the API refused. */
export function statusOfError(error: ReadError): number {
  if (error.code === 'UNAUTHENTICATED') return 401;
  if (error.code === 'BAD_USER_INPUT') return 400;
  if (error.code === 'NOT_FOUND') return 404;
  return 500;
}

/** 200, or the status of the refusal. */
export function statusOf(result: ReadResult<unknown>): number {
  return result.ok ? 200 : statusOfError(result.error);
}
