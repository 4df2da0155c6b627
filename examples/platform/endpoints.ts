/** The platform's endpoints. Their names key configuration, stats and the request log. */
export const endpoints = [
  'uploadAsset',
  'publishPost',
  'getPost',
  'getSubmission',
  'requestReview',
] as const;
export type Endpoint = (typeof endpoints)[number];

/** Endpoints that perform an effect, and so honour `Idempotency-Key`. */
export const effectEndpoints: ReadonlySet<Endpoint> = new Set([
  'uploadAsset',
  'publishPost',
  'requestReview',
]);

interface Route {
  readonly endpoint: Endpoint;
  readonly method: 'GET' | 'POST';
  readonly path: RegExp;
}

const routes: ReadonlyArray<Route> = [
  { endpoint: 'uploadAsset', method: 'POST', path: /^\/assets\/?$/ },
  { endpoint: 'publishPost', method: 'POST', path: /^\/posts\/?$/ },
  { endpoint: 'getPost', method: 'GET', path: /^\/posts\/([^/]+)\/?$/ },
  { endpoint: 'getSubmission', method: 'GET', path: /^\/submissions\/([^/]+)\/?$/ },
  { endpoint: 'requestReview', method: 'POST', path: /^\/reviews\/?$/ },
];

export interface RouteMatch {
  readonly endpoint: Endpoint;
  /** The `:id` path segment, decoded; null for endpoints without one. */
  readonly param: string | null;
}

/** Finds the endpoint for a method and path; null when nothing matches. */
export function matchRoute(method: string, pathname: string): RouteMatch | null {
  for (const route of routes) {
    if (route.method !== method) continue;
    const match = route.path.exec(pathname);
    if (match === null) continue;
    const segment = match[1];
    return { endpoint: route.endpoint, param: segment === undefined ? null : safeDecode(segment) };
  }
  return null;
}

export function isEndpoint(value: string): value is Endpoint {
  return (endpoints as ReadonlyArray<string>).includes(value);
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
