import type { ExecutionArgs, GraphQLError } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import type { YogaServerInstance } from 'graphql-yoga';
import type { WebSocketServer } from 'ws';
import type { OperatorDirectory } from './auth';
import type { ApiContext } from './context';

interface Options {
  readonly webSockets: WebSocketServer;
  readonly yoga: YogaServerInstance<Record<string, unknown>, ApiContext>;
  readonly directory: OperatorDirectory;
  /** Read at each connection: the server decides it when it binds its address. */
  readonly publicReads: () => boolean;
  readonly mapError: (error: unknown) => GraphQLError;
  readonly production: boolean;
}

interface Enveloped {
  execute: (args: ExecutionArgs) => unknown;
  subscribe: (args: ExecutionArgs) => unknown;
}

/**
 * graphql-ws (the `graphql-transport-ws` protocol) on the HTTP server's endpoint, through the
 * same yoga envelope (limits, masking, context). Authentication happens once, at connection
 * time: `connection_init` carries `{ authorization: "Bearer <token>" }` (or the upgrade request
 * has the header); an invalid token, or none where reads need one, closes the socket with 4403
 * before any operation.
 * Returns a function that closes every socket and the server.
 */
export function attachWebSocketServer(options: Options): () => Promise<void> {
  const operators = new WeakMap<object, string | null>();
  const disposable = useServer(
    {
      execute: (args) => (args.rootValue as Enveloped).execute(args) as never,
      subscribe: (args) => (args.rootValue as Enveloped).subscribe(args) as never,
      onConnect(ctx) {
        const params = ctx.connectionParams ?? {};
        const fromParams = params.authorization ?? params.Authorization;
        const authorization =
          typeof fromParams === 'string' ? fromParams : ctx.extra.request.headers.authorization;
        const lookup = options.directory.lookup(authorization);
        if (lookup.kind === 'invalid') return false;
        if (lookup.kind === 'anonymous' && !options.publicReads()) return false;
        operators.set(ctx, lookup.kind === 'operator' ? lookup.name : null);
        return true;
      },
      async onSubscribe(ctx, _id, payload) {
        const enveloped = options.yoga.getEnveloped({
          ...ctx,
          req: ctx.extra.request,
          socket: ctx.extra.socket,
          params: payload,
          wsOperator: operators.get(ctx) ?? null,
        });
        let document: ReturnType<typeof enveloped.parse>;
        try {
          document = enveloped.parse(payload.query);
        } catch (error) {
          return [options.mapError(error)];
        }
        const errors = enveloped.validate(enveloped.schema, document);
        if (errors.length > 0) return errors.map((error: GraphQLError) => options.mapError(error));
        try {
          return {
            schema: enveloped.schema,
            operationName: payload.operationName,
            document,
            variableValues: payload.variables,
            contextValue: await enveloped.contextFactory(),
            rootValue: { execute: enveloped.execute, subscribe: enveloped.subscribe },
          };
        } catch (error) {
          return [options.mapError(error)];
        }
      },
      onError(_ctx, _id, _payload, errors) {
        return errors.map((error) => options.mapError(error).toJSON());
      },
      isProd: options.production,
    },
    options.webSockets,
  );
  return async () => {
    for (const client of options.webSockets.clients) {
      client.close(1001, 'server shutting down');
    }
    await disposable.dispose();
  };
}
