/**
 * The GraphQL API for `pnpm start` (called from main.ts; nothing runs on import).
 *
 *   const controller = new AbortController(); // the service's root signal (R6)
 *   const engine = createEngine({ databaseUrl, workflows: [publishNote], logger, signal: controller.signal });
 *   const api = await serveApi({ engine, databaseUrl, logger, signal: controller.signal });
 *   console.log(api.banner);
 *   process.once('SIGINT', () => controller.abort()); // closes the API and the engine's workers
 *
 * Configuration (environment):
 * - CAUSEWAY_API_PORT (default 4000), CAUSEWAY_API_HOST (default 127.0.0.1: loopback only, so
 *   reads need no token; on any other address every read needs one too, see README);
 * - CAUSEWAY_API_MODE: `development` (default here: GraphiQL, introspection) or `production`;
 * - CAUSEWAY_OPERATORS (JSON `[{ "name": "alice", "token": "…" }]`) or CAUSEWAY_OPERATORS_FILE
 *   (a file with that JSON). With neither, one operator `demo` gets a random token for this run,
 *   printed in the banner, so the mutations can be tried from GraphiQL.
 */
import { randomBytes } from 'node:crypto';
import { type ApiMode, type ApiServer, createApiServer, loadOperators } from '@causeway/api';
import type { Engine, Logger } from '@causeway/engine';
import type { WorkflowDefinition } from '@causeway/workflow';
import { publishNote } from './workflow';

export interface ServeApiOptions {
  readonly engine: Engine;
  /** The same database the engine uses (the API's LISTEN connection). */
  readonly databaseUrl: string;
  readonly logger?: Logger;
  /** The service's root signal: aborting it closes the API (and, passed to the engine, its workers). */
  readonly signal?: AbortSignal;
  readonly port?: number;
  readonly host?: string;
  readonly mode?: ApiMode;
  /** The definitions the API describes (default: the three-step publish-note). */
  readonly workflows?: readonly WorkflowDefinition[];
}

export interface ServedApi {
  /** The GraphQL endpoint (HTTP: queries, mutations, SSE; GraphiQL in development). The dashboard is at `/`. */
  readonly url: string;
  /** The same endpoint for graphql-ws. */
  readonly wsUrl: string;
  /** Operator names, and the generated demo token when none was configured. */
  readonly operators: readonly string[];
  readonly demoToken: string | null;
  /** Lines to print: where the API is and how to authenticate. */
  readonly banner: string;
  readonly server: ApiServer;
  close(): Promise<void>;
}

export async function serveApi(options: ServeApiOptions): Promise<ServedApi> {
  const configured = loadOperators();
  const demoToken = configured.length === 0 ? randomBytes(24).toString('base64url') : null;
  const operators = demoToken === null ? configured : [{ name: 'demo', token: demoToken }];
  const mode =
    options.mode ?? (process.env.CAUSEWAY_API_MODE === 'production' ? 'production' : 'development');
  const server = createApiServer({
    engine: options.engine,
    workflows: options.workflows ?? [publishNote],
    databaseUrl: options.databaseUrl,
    operators,
    mode,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  const { url, publicReads } = await server.listen({
    port: options.port ?? Number(process.env.CAUSEWAY_API_PORT ?? 4000),
    host: options.host ?? process.env.CAUSEWAY_API_HOST ?? '127.0.0.1',
  });
  const wsUrl = url.replace(/^http/, 'ws');
  const needs = publicReads
    ? 'mutations need a token (reads are open: this address is loopback only)'
    : 'reads and mutations need a token (sign in to the dashboard with it)';
  const banner = [
    `GraphQL API: ${url}${mode === 'development' ? ' (GraphiQL: open it in a browser)' : ''}`,
    `  subscriptions: SSE on the same URL, graphql-ws on ${wsUrl}`,
    `Dashboard: ${new URL('/', url).href}`,
    `Metrics (Prometheus): ${new URL('/metrics', url).href}`,
    `CLI: pnpm exec causeway status|why|watch|workers …${url === 'http://127.0.0.1:4000/graphql' ? '' : ` --url ${url}`} (CAUSEWAY_TOKEN for ${publicReads ? 'mutations' : 'every command'})`,
    demoToken === null
      ? `  operators: ${operators.map((operator) => operator.name).join(', ')}; ${needs}: Authorization: Bearer <token>`
      : `  ${needs}: Authorization: Bearer ${demoToken} (operator "demo", this run only)`,
  ].join('\n');
  return {
    url,
    wsUrl,
    operators: operators.map((operator) => operator.name),
    demoToken,
    banner,
    server,
    close: () => server.close(),
  };
}
