import type { Logger } from '@causeway/engine';
import type { WorkflowDefinition } from '@causeway/workflow';
import { type ExecutionResult, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { ApiContext } from '../context';
import { createLoaders } from '../loaders';
import {
  type ReadRouter,
  type ReadServer,
  readAfterExtension,
  readAfterHeader,
  readFromHeader,
} from './read-router';

/** What the response of one HTTP request says about where it read or what it wrote. */
interface Answered {
  server?: ReadServer;
  readAfter?: string;
}

/**
 * Routes GraphQL reads between the primary and the replica (see `ReadRouter`):
 * - a query reads where the router says: its resolvers get that server's read model;
 * - a mutation runs as always (the engine, on the primary; its payload is read there too, it
 *   is the engine's own answer), then its result carries the primary's WAL position in
 *   `extensions.readAfter` and the `causeway-read-after` header, for the client to send back;
 * - subscriptions are not touched: the transition stream follows the primary (LISTEN/NOTIFY
 *   does not reach a physical replica, and its horizon needs a transaction id).
 * The token comes from the `causeway-read-after` header or the request's `extensions.readAfter`
 * (the one a WebSocket operation can carry).
 */
export function replicaPlugin(
  router: ReadRouter,
  // biome-ignore lint/suspicious/noExplicitAny: each definition has its own input schema type.
  definitions: ReadonlyMap<string, WorkflowDefinition<any>>,
  logger: Logger,
): Plugin<ApiContext> {
  const answered = new WeakMap<Request, Answered>();
  const note = (context: ApiContext, fields: Answered) => {
    const request = (context as { request?: Request }).request;
    if (request !== undefined) answered.set(request, { ...answered.get(request), ...fields });
  };
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const kind = getOperationAST(args.document, args.operationName)?.operation;
      if (kind === 'mutation') {
        setExecuteFn(async (executeArgs) => {
          const result = await executeFn(executeArgs);
          if (!isSingleResult(result)) return result;
          const context = executeArgs.contextValue as ApiContext;
          let readAfter: string | null;
          try {
            readAfter = await router.afterWrite(context.operator);
          } catch (error) {
            // The mutation committed; only its token is missing (the next read may be older).
            logger.warn({ err: error }, 'reading the WAL position after a mutation failed');
            return result;
          }
          if (readAfter === null) return result;
          note(context, { readAfter });
          return {
            ...result,
            extensions: { ...result.extensions, [readAfterExtension]: readAfter },
          };
        });
      } else if (kind === 'query') {
        setExecuteFn(async (executeArgs) => {
          const context = executeArgs.contextValue as ApiContext;
          const route = await router.route({
            token: tokenOf(context),
            operator: context.operator,
          });
          note(context, { server: route.server });
          return executeFn({
            ...executeArgs,
            contextValue: {
              ...context,
              reads: route.readModel,
              loaders: createLoaders(
                route.readModel,
                definitions,
                context.services.engine.declaredRateLimits,
              ),
            } satisfies ApiContext,
          });
        });
      }
    },
    onResponse({ request, response }) {
      const fields = answered.get(request);
      if (fields?.server !== undefined) response.headers.set(readFromHeader, fields.server);
      if (fields?.readAfter !== undefined) response.headers.set(readAfterHeader, fields.readAfter);
    },
  };
}

function isSingleResult(result: unknown): result is ExecutionResult {
  return typeof result === 'object' && result !== null && !(Symbol.asyncIterator in result);
}

/** The client's token: the header first, then the request's GraphQL extensions. */
function tokenOf(context: ApiContext): string | null {
  const { request, params } = context as {
    request?: Request;
    params?: { extensions?: Record<string, unknown> };
  };
  const header = request?.headers.get(readAfterHeader);
  if (header !== undefined && header !== null && header !== '') return header;
  const extension = params?.extensions?.[readAfterExtension];
  // Anything else than a string is not a position: the router refuses it (BAD_USER_INPUT).
  return extension === undefined || extension === null ? null : String(extension);
}
