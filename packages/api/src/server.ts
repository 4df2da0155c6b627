import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReadModel, type Engine, type Logger, type ReadModel } from '@causeway/engine';
import type { WorkflowDefinition } from '@causeway/workflow';
import { withMapChildren, workflowRegistry } from '@causeway/workflow/internal';
import {
  GraphQLError,
  getOperationAST,
  NoSchemaIntrospectionCustomRule,
  type ParseOptions,
  parse,
  type Source,
} from 'graphql';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import { pino } from 'pino';
import { WebSocketServer } from 'ws';
import { isLoopbackAddress, loadOperators, type OperatorConfig, operatorDirectory } from './auth';
import type { ApiContext, ApiServices } from './context';
import { createDashboard } from './dashboard/dashboard';
import { ApiError, toGraphQLError, withoutSuggestions } from './errors';
import { defaultQueryLimits, type QueryLimits, queryLimitsRule } from './limits';
import { createLoaders } from './loaders';
import { MetricsEndpoint, type MetricsOptions } from './metrics/metrics-endpoint';
import { MutationMemo } from './mutation-memo';
import { connectReplica, type ReplicaOptions } from './replica/replica-connection';
import { replicaPlugin } from './replica/replica-plugin';
import { buildApiSchema } from './schema';
import { TransitionFeed } from './transition-feed';
import { attachWebSocketServer } from './websocket';

export type ApiMode = 'production' | 'development';

export interface ApiServerOptions {
  /** The engine whose operations the mutations call (the caller owns it and closes it). */
  readonly engine: Engine;
  /** The definitions the engine was created with (for `definitions` and step order). */
  // biome-ignore lint/suspicious/noExplicitAny: each definition has its own input schema type.
  readonly workflows: readonly WorkflowDefinition<any>[];
  /** Bearer tokens and operator names. Default: `loadOperators()` (CAUSEWAY_OPERATORS(_FILE)). */
  readonly operators?: readonly OperatorConfig[];
  /** The database for the LISTEN connection. Default: DATABASE_URL. */
  readonly databaseUrl?: string;
  /** Reads for queries and streams. Default: `createReadModel(engine.db)`. */
  readonly readModel?: ReadModel;
  /**
   * A streaming read replica: queries (and the dashboard's pages) read it once it has replayed
   * what their client wrote; mutations, subscriptions and the metrics stay on the primary.
   */
  readonly replica?: ReplicaOptions;
  /**
   * `development` enables GraphiQL, introspection and field suggestions; `production` (the
   * default unless NODE_ENV=development) turns them off.
   */
  readonly mode?: ApiMode;
  /**
   * Queries, subscriptions, the dashboard's data and `/metrics` without a token. Default: only
   * when the server listens on loopback only (127.0.0.1, ::1, localhost); on any other address
   * every read needs a token. `true` opens reads anywhere (logged as a warning off loopback).
   * Mutations always need an operator's token.
   */
  readonly publicReads?: boolean;
  readonly limits?: Partial<QueryLimits>;
  /** Largest request body (HTTP) or message (WebSocket), in bytes. Default 1 MiB. */
  readonly maxBodyBytes?: number;
  readonly logger?: Logger;
  /** Transition stream tuning. */
  readonly feed?: { readonly pollIntervalMs?: number; readonly maxBuffered?: number };
  /** Aborting it closes the server (the service's root signal). */
  readonly signal?: AbortSignal;
  /** GraphQL endpoint path, for HTTP and WebSocket. Default `/graphql`. */
  readonly endpoint?: string;
  /** Prometheus metrics at `/metrics` (docs/metrics.md); `false` serves none. */
  readonly metrics?: MetricsOptions | false;
}

export interface ApiServer {
  /**
   * Starts the LISTEN connection and the HTTP/WebSocket server (default 127.0.0.1:4000; port 0
   * picks a free port). `publicReads` says whether reads need no token on the bound address.
   */
  listen(options?: {
    port?: number;
    host?: string;
  }): Promise<{ url: string; port: number; publicReads: boolean }>;
  /** Stops accepting, completes every subscription, closes connections and LISTEN. */
  close(): Promise<void>;
  readonly httpServer: Server;
  readonly yoga: YogaServerInstance<Record<string, unknown>, ApiContext>;
  readonly feed: TransitionFeed;
}

const defaultMaxBodyBytes = 1024 * 1024;

/**
 * Causeway's GraphQL API: graphql-yoga over node:http (GraphQL over HTTP, SSE subscriptions)
 * plus graphql-ws on the same server and path.
 */
export function createApiServer(options: ApiServerOptions): ApiServer {
  const mode: ApiMode =
    options.mode ?? (process.env.NODE_ENV === 'development' ? 'development' : 'production');
  const production = mode === 'production';
  const logger = options.logger ?? pino({ level: process.env.CAUSEWAY_LOG_LEVEL ?? 'info' });
  const limits: QueryLimits = { ...defaultQueryLimits, ...options.limits };
  const maxBodyBytes = options.maxBodyBytes ?? defaultMaxBodyBytes;
  const endpoint = options.endpoint ?? '/graphql';
  // Without the option, reads stay closed until listen() has bound a loopback-only address.
  let publicReads = options.publicReads ?? false;
  const directory = operatorDirectory(options.operators ?? loadOperators());
  const databaseUrl = options.databaseUrl ?? process.env.DATABASE_URL;
  if (databaseUrl === undefined || databaseUrl === '') {
    throw new Error('createApiServer needs databaseUrl or DATABASE_URL for its LISTEN connection');
  }
  const readModel = options.readModel ?? createReadModel(options.engine.db);
  const replica =
    options.replica === undefined ? null : connectReplica(options.replica, readModel, logger);
  const feed = new TransitionFeed({
    readModel,
    databaseUrl,
    logger,
    trackWalPosition: replica !== null,
    ...(options.feed?.pollIntervalMs === undefined
      ? {}
      : { pollIntervalMs: options.feed.pollIntervalMs }),
    ...(options.feed?.maxBuffered === undefined ? {} : { maxBuffered: options.feed.maxBuffered }),
  });
  const services: ApiServices = {
    engine: options.engine,
    readModel,
    feed,
    // Every version, as the engine keys them (R54): by name the latest, `at` any other.
    definitions: workflowRegistry(withMapChildren(options.workflows)),
    limits,
    memo: new MutationMemo(),
  };
  const mapError = (error: unknown) =>
    toGraphQLError(error, {
      production,
      onUnexpected: (cause) =>
        logger.error({ err: cause }, 'unexpected error in a GraphQL operation'),
    });

  const yoga = createYoga<Record<string, unknown>, ApiContext>({
    schema: buildApiSchema(),
    graphqlEndpoint: endpoint,
    graphiql: production ? false : { subscriptionsProtocol: 'WS' },
    landingPage: false,
    batching: false,
    cors: false,
    logging: {
      debug: () => undefined,
      info: (...args: unknown[]) => logger.info({ yoga: args }, 'graphql-yoga'),
      warn: (...args: unknown[]) => logger.warn({ yoga: args }, 'graphql-yoga'),
      error: (...args: unknown[]) => logger.error({ yoga: args }, 'graphql-yoga'),
    },
    maskedErrors: { maskError: (error) => mapError(error) },
    context: (initial): ApiContext => {
      const fromSocket = (initial as { wsOperator?: string | null }).wsOperator;
      let operator: string | null;
      if (fromSocket !== undefined) {
        operator = fromSocket;
      } else {
        const lookup = directory.lookup(initial.request.headers.get('authorization'));
        if (lookup.kind === 'invalid') {
          throw new ApiError('UNAUTHENTICATED', 'the bearer token is not valid');
        }
        if (lookup.kind === 'anonymous' && !publicReads) {
          throw new ApiError('UNAUTHENTICATED', 'send Authorization: Bearer <token>');
        }
        operator = lookup.kind === 'operator' ? lookup.name : null;
      }
      return {
        operator,
        reads: readModel,
        loaders: createLoaders(readModel, services.definitions, services.engine.declaredRateLimits),
        services,
        signal: fromSocket !== undefined ? undefined : initial.request.signal,
      };
    },
    plugins: [
      limitsPlugin(limits, production),
      operatorPlugin(mapError),
      ...(replica === null ? [] : [replicaPlugin(replica.router, services.definitions, logger)]),
    ],
  });

  const metrics =
    options.metrics === false
      ? null
      : new MetricsEndpoint({
          engine: options.engine,
          readModel,
          operators: directory,
          publicReads: () => publicReads,
          logger,
          metrics: options.metrics ?? {},
          ...(replica === null ? {} : { replicaLag: () => replica.lag() }),
        });
  const httpServer = createServer((request, response) => {
    void handleHttp(request, response);
  });
  const dashboard = createDashboard({ yoga, feed, endpoint, logger });
  const handleHttp = async (request: IncomingMessage, response: ServerResponse) => {
    if (metrics !== null && request.url?.split('?')[0] === metrics.path) {
      return metrics.handle(request, response);
    }
    if (dashboard.handles(request)) return dashboard.serve(request, response);
    if (request.method === 'POST' || request.method === 'PUT' || request.method === 'PATCH') {
      const body = await readBody(request, maxBodyBytes);
      if (body === 'too-large') {
        sendError(
          response,
          413,
          'PAYLOAD_TOO_LARGE',
          `the request body is over ${maxBodyBytes} bytes`,
        );
        return;
      }
      if (body === 'failed') return;
      // The adapter uses a pre-read body as is (so the size limit holds for chunked bodies too).
      (request as IncomingMessage & { body?: Buffer }).body = body;
    }
    await yoga(request, response);
  };

  const webSockets = new WebSocketServer({
    server: httpServer,
    path: endpoint,
    maxPayload: maxBodyBytes,
  });
  const detachWebSockets = attachWebSocketServer({
    webSockets,
    yoga,
    directory,
    publicReads: () => publicReads,
    mapError,
    production,
  });

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      // Subscriptions complete first (SSE responses end, WebSocket operations complete).
      await feed.close();
      await metrics?.close();
      await detachWebSockets();
      await new Promise<void>((resolve) => {
        httpServer.close(() => resolve());
        httpServer.closeIdleConnections();
        // Whatever is still open after the subscriptions ended is cut.
        setTimeout(() => httpServer.closeAllConnections(), 1_000).unref();
      });
      await replica?.close();
    })();
    return closing;
  };
  if (options.signal?.aborted) void close();
  else options.signal?.addEventListener('abort', () => void close(), { once: true });

  return {
    httpServer,
    yoga,
    feed,
    close,
    async listen(listenOptions = {}) {
      await feed.start();
      await metrics?.start();
      await replica?.start();
      await new Promise<void>((resolve, reject) => {
        httpServer.once('error', reject);
        httpServer.listen(listenOptions.port ?? 4000, listenOptions.host ?? '127.0.0.1', () => {
          httpServer.off('error', reject);
          resolve();
        });
      });
      const address = httpServer.address() as AddressInfo;
      const loopback = isLoopbackAddress(address.address);
      publicReads = options.publicReads ?? loopback;
      if (publicReads && !loopback) {
        logger.warn(
          { address: address.address, port: address.port },
          'reads are public on an address others can reach: anyone there can read inputs, outputs and events',
        );
      } else {
        logger.info({ address: address.address, port: address.port, publicReads }, 'API listening');
      }
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      return {
        url: `http://${host}:${address.port}${endpoint}`,
        port: address.port,
        publicReads,
      };
    },
  };
}

/** Depth, cost, alias and token limits at parse/validation time; no introspection in production. */
function limitsPlugin(limits: QueryLimits, production: boolean): Plugin {
  return {
    onParse({ setParseFn }) {
      setParseFn((source: string | Source, parseOptions?: ParseOptions) => {
        try {
          return parse(source, { ...parseOptions, maxTokens: limits.maxTokens });
        } catch (error) {
          if (
            error instanceof GraphQLError &&
            /Document contains more tha[nt] \d+ tokens/.test(error.message)
          ) {
            throw new GraphQLError(
              `The document has more than ${limits.maxTokens} tokens, over the limit.`,
              { extensions: { code: 'QUERY_TOO_COMPLEX', limit: 'tokens', max: limits.maxTokens } },
            );
          }
          throw error;
        }
      });
    },
    onValidate({ addValidationRule }) {
      addValidationRule(queryLimitsRule(limits));
      if (!production) return;
      addValidationRule(NoSchemaIntrospectionCustomRule);
      // No field suggestions in production: they describe the schema to a prober.
      return ({ result, setResult }) => {
        if (result.length === 0) return;
        setResult(
          result.map(
            (error) =>
              new GraphQLError(withoutSuggestions(error.message), {
                ...(error.nodes === undefined ? {} : { nodes: error.nodes }),
                ...(error.source === undefined ? {} : { source: error.source }),
                ...(error.positions === undefined ? {} : { positions: error.positions }),
                extensions: error.extensions,
              }),
          ),
        );
      };
    },
  };
}

/**
 * Mutations need an operator: refused before execution, so nothing runs (HTTP 401). The
 * result is set rather than thrown, so a WebSocket operation gets an error, not a dead socket.
 */
function operatorPlugin(mapError: (error: unknown) => GraphQLError): Plugin<ApiContext> {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const operation = getOperationAST(args.document, args.operationName);
      if (operation?.operation === 'mutation' && args.contextValue.operator === null) {
        setResultAndStopExecution({
          errors: [
            mapError(
              new ApiError(
                'UNAUTHENTICATED',
                'mutations need an operator token: send Authorization: Bearer <token>',
              ),
            ),
          ],
        });
      }
    },
  };
}

async function readBody(
  request: IncomingMessage,
  maxBytes: number,
): Promise<Buffer | 'too-large' | 'failed'> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return 'too-large';
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of request) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) return 'too-large';
      chunks.push(chunk as Buffer);
    }
  } catch {
    return 'failed';
  }
  return Buffer.concat(chunks);
}

function sendError(response: ServerResponse, status: number, code: string, message: string): void {
  const body = JSON.stringify({ errors: [{ message, extensions: { code } }] });
  response.writeHead(status, {
    'content-type': 'application/graphql-response+json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  });
  response.end(body);
}
