/**
 * The dashboard: server-rendered pages (every value escaped by the `html` template) plus one
 * small script that follows the transition stream, swaps the changed parts of the page and
 * sends the operator's mutations. Served by the API process on the same origin as GraphQL,
 * under a Content-Security-Policy that allows only this origin's own script and stylesheet.
 * docs/dashboard.md says why it is built this way.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@causeway/engine';
import { laterLsn } from '../replica/lsn';
import { readAfterHeader } from '../replica/read-router';
import type { TransitionFeed } from '../transition-feed';
import { type DashboardYoga, graphqlReader, statusOf } from './graphql-reads';
import type { SafeHtml } from './html';
import { type LiveMode, type PageShell, renderPage, renderProblem } from './layout';
import { type QueuesData, queuesQuery, renderQueuesPage } from './queues-page';
import { renderSchedulesPage, type SchedulesData, schedulesQuery } from './schedules-page';
import { loadStaticAssets } from './static-assets';
import { renderWorkersPage, type WorkersData, workersQuery } from './workers-page';
import { readStepChildren } from './workflow-children';
import { renderWorkflowPage } from './workflow-page';
import { type WorkflowPageData, workflowQuery } from './workflow-query';
import {
  filterParams,
  renderWorkflowsPage,
  type WorkflowsData,
  workflowsQuery,
  workflowsVariables,
} from './workflows-page';

export interface DashboardOptions {
  readonly yoga: DashboardYoga;
  readonly feed: TransitionFeed;
  /** The GraphQL endpoint's path (the script talks to it; it is never a dashboard page). */
  readonly endpoint: string;
  readonly logger: Logger;
}

export interface Dashboard {
  /** True for the requests the dashboard answers: GET/HEAD of its pages and `/dashboard/*`. */
  handles(request: IncomingMessage): boolean;
  serve(request: IncomingMessage, response: ServerResponse): Promise<void>;
}

/** Only this origin's script, stylesheet and GraphQL endpoint; no inline code, no framing. */
export const contentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

const assetPrefix = '/dashboard/';

/** What a path names: a page, an asset, or nothing of the dashboard's. */
type Route =
  | { readonly kind: 'list' | 'schedules' | 'queues' | 'workers' }
  | { readonly kind: 'workflow'; readonly id: string }
  | { readonly kind: 'asset'; readonly name: string }
  | { readonly kind: 'missing' };

/** The route of a normalised path (`new URL` resolves dot segments and percent-escapes). */
function routeOf(pathname: string): Route | null {
  if (pathname === '/') return { kind: 'list' };
  if (pathname === '/schedules') return { kind: 'schedules' };
  if (pathname === '/queues') return { kind: 'queues' };
  if (pathname === '/workers') return { kind: 'workers' };
  if (pathname.startsWith(assetPrefix))
    return { kind: 'asset', name: pathname.slice(assetPrefix.length) };
  const workflow = /^\/workflows\/([^/]+)$/.exec(pathname);
  if (workflow !== null) {
    try {
      return { kind: 'workflow', id: decodeURIComponent(workflow[1] as string) };
    } catch {
      return { kind: 'missing' };
    }
  }
  return pathname.startsWith('/workflows/') ? { kind: 'missing' } : null;
}

function urlOf(request: IncomingMessage): URL {
  return new URL(request.url ?? '/', 'http://dashboard.invalid');
}

interface Rendered {
  readonly status: number;
  readonly title: string;
  readonly section: PageShell['section'];
  readonly live: LiveMode;
  readonly body: SafeHtml;
}

export function createDashboard(options: DashboardOptions): Dashboard {
  const assets = loadStaticAssets();
  const reader = graphqlReader(options.yoga, options.endpoint);

  const renderRoute = async (
    route: Exclude<Route, { kind: 'asset' }>,
    url: URL,
    from: IncomingHttpHeaders,
  ): Promise<Rendered> => {
    const now = new Date();
    switch (route.kind) {
      case 'list': {
        const params = filterParams(url.searchParams);
        const variables = workflowsVariables(params);
        const result =
          variables === null
            ? null
            : await reader.read<WorkflowsData>(workflowsQuery, variables, from);
        return {
          status: result === null ? 400 : statusOf(result),
          title: 'Workflows',
          section: 'workflows',
          live: { kind: 'workflows' },
          body: renderWorkflowsPage(params, result, now),
        };
      }
      case 'schedules': {
        const result = await reader.read<SchedulesData>(schedulesQuery, {}, from);
        return {
          status: statusOf(result),
          title: 'Schedules',
          section: 'schedules',
          live: { kind: 'workflows' },
          body: renderSchedulesPage(result, now),
        };
      }
      case 'queues': {
        const result = await reader.read<QueuesData>(queuesQuery, {}, from);
        return {
          status: statusOf(result),
          title: 'Queues',
          section: 'queues',
          live: { kind: 'none' },
          body: renderQueuesPage(result, now),
        };
      }
      case 'workers': {
        const includeStale = url.searchParams.get('stale') === '1';
        const result = await reader.read<WorkersData>(workersQuery, { includeStale }, from);
        return {
          status: statusOf(result),
          title: 'Workers',
          section: 'workers',
          live: { kind: 'none' },
          body: renderWorkersPage(includeStale, result, now),
        };
      }
      case 'workflow': {
        const result = await reader.read<WorkflowPageData>(workflowQuery, { id: route.id }, from);
        const children =
          result.ok && result.data.workflow !== null
            ? await readStepChildren(reader, route.id, result.data.workflow.childCounts, from)
            : new Map();
        const page = renderWorkflowPage(route.id, result, children, now);
        return {
          ...page,
          section: 'workflows',
          live: page.status === 200 ? { kind: 'workflow', workflowId: route.id } : { kind: 'none' },
        };
      }
      case 'missing':
        return {
          status: 404,
          title: 'Not found',
          section: 'none',
          live: { kind: 'none' },
          body: renderProblem('NOT_FOUND', `the dashboard has no page at ${url.pathname}`),
        };
    }
  };

  const servePage = async (
    request: IncomingMessage,
    response: ServerResponse,
    route: Exclude<Route, { kind: 'asset' }>,
    url: URL,
  ) => {
    // Read before the data: the stream resumes after this id, so no edge between the read
    // and the subscription is missed (one the data already shows only refreshes it again).
    const after = options.feed.position;
    // With a read replica, the page shows at least what the stream has already announced:
    // a refresh that a streamed edge caused must not read a replica that lacks the edge.
    const sent = request.headers[readAfterHeader];
    const readAfter = laterLsn(typeof sent === 'string' ? sent : null, options.feed.readAfter);
    const from =
      readAfter === null ? request.headers : { ...request.headers, [readAfterHeader]: readAfter };
    let rendered: Rendered;
    try {
      rendered = await renderRoute(route, url, from);
    } catch (error) {
      options.logger.error({ err: error, path: url.pathname }, 'dashboard page failed');
      rendered = {
        status: 500,
        title: 'Error',
        section: 'none',
        live: { kind: 'none' },
        body: renderProblem(
          'INTERNAL_SERVER_ERROR',
          'the page could not be rendered; the API log says why',
        ),
      };
    }
    const page = renderPage({ ...rendered, after, endpoint: options.endpoint }).value;
    send(request, response, rendered.status, 'text/html; charset=utf-8', page, {
      'cache-control': 'no-store',
    });
  };

  const serveAsset = (request: IncomingMessage, response: ServerResponse, name: string) => {
    const asset = assets.get(name);
    if (asset === undefined) {
      send(request, response, 404, 'text/plain; charset=utf-8', 'not found\n', {});
      return;
    }
    const headers = { etag: asset.etag, 'cache-control': 'no-cache' };
    if (request.headers['if-none-match'] === asset.etag) {
      response.writeHead(304, { ...securityHeaders, ...headers });
      response.end();
      return;
    }
    send(request, response, 200, asset.contentType, asset.body, headers);
  };

  return {
    handles(request) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return false;
      const { pathname } = urlOf(request);
      return pathname !== options.endpoint && routeOf(pathname) !== null;
    },
    async serve(request, response) {
      const url = urlOf(request);
      const route = routeOf(url.pathname) ?? { kind: 'missing' };
      if (route.kind === 'asset') serveAsset(request, response, route.name);
      else await servePage(request, response, route, url);
    },
  };
}

const securityHeaders = {
  'content-security-policy': contentSecurityPolicy,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

function send(
  request: IncomingMessage,
  response: ServerResponse,
  status: number,
  contentType: string,
  body: string | Buffer,
  headers: Record<string, string>,
): void {
  response.writeHead(status, {
    ...securityHeaders,
    ...headers,
    'content-type': contentType,
    'content-length': Buffer.byteLength(body),
  });
  response.end(request.method === 'HEAD' ? undefined : body);
}
