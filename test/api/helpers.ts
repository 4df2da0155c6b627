import { type ApiServer, type ApiServerOptions, createApiServer } from '@causeway/api';
import type { Engine, EngineOptions } from '@causeway/engine';
import { type Client, createClient } from 'graphql-ws';
import { pino } from 'pino';
import { afterEach } from 'vitest';
import WebSocket from 'ws';
import { testEngine } from '../helpers/engine';

/** Operators every API test server knows. */
export const operators = [
  { name: 'alice', token: 'alice-token-0123456789abcdef' },
  { name: 'bob', token: 'bob-token-0123456789abcdef' },
] as const;
export const aliceToken = operators[0].token;
export const bobToken = operators[1].token;

export const silentLogger = () =>
  pino({ level: process.env.CAUSEWAY_TEST_LOG === '1' ? 'debug' : 'silent' });

const servers = new Set<ApiServer>();
const clients = new Set<Client>();
afterEach(async () => {
  await Promise.all([...clients].map((client) => client.dispose()));
  clients.clear();
  await Promise.all([...servers].map((server) => server.close()));
  servers.clear();
});

export interface TestApi {
  readonly url: string;
  readonly wsUrl: string;
  readonly engine: Engine;
  readonly server: ApiServer;
}

/** An engine and an API server, on loopback unless `host` says otherwise (closed after the test). */
export async function startApi(
  databaseUrl: string,
  options: {
    engine?: Omit<EngineOptions, 'databaseUrl'>;
    api?: Partial<Omit<ApiServerOptions, 'engine'>>;
    engineInstance?: Engine;
    /** Where the server listens (default 127.0.0.1); the URLs returned always name 127.0.0.1. */
    host?: string;
  },
): Promise<TestApi> {
  const engine =
    options.engineInstance ??
    testEngine(databaseUrl, options.engine ?? { workflows: options.api?.workflows ?? [] });
  await engine.migrate();
  const server = createApiServer({
    engine,
    workflows: options.api?.workflows ?? options.engine?.workflows ?? [],
    operators,
    databaseUrl,
    logger: silentLogger(),
    mode: 'production',
    feed: { pollIntervalMs: 500 },
    ...options.api,
  });
  servers.add(server);
  const { port } = await server.listen({ port: 0, host: options.host ?? '127.0.0.1' });
  const url = `http://127.0.0.1:${port}${options.api?.endpoint ?? '/graphql'}`;
  return { url, wsUrl: url.replace(/^http/, 'ws'), engine, server };
}

export interface GraphQLResponse<T = Record<string, unknown>> {
  readonly status: number;
  readonly contentType: string | null;
  readonly headers: Headers;
  readonly body: {
    data?: T | null;
    errors?: { message: string; path?: string[]; extensions?: Record<string, unknown> }[];
  };
}

/** One GraphQL request with fetch (POST JSON unless `method: 'GET'`). */
export async function gql<T = Record<string, unknown>>(
  url: string,
  query: string,
  options: {
    variables?: Record<string, unknown>;
    token?: string;
    method?: 'GET' | 'POST';
    accept?: string;
    operationName?: string;
  } = {},
): Promise<GraphQLResponse<T>> {
  const headers: Record<string, string> = {
    accept: options.accept ?? 'application/graphql-response+json',
  };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let response: Response;
  if (options.method === 'GET') {
    const target = new URL(url);
    target.searchParams.set('query', query);
    if (options.variables) target.searchParams.set('variables', JSON.stringify(options.variables));
    if (options.operationName) target.searchParams.set('operationName', options.operationName);
    response = await fetch(target, { headers });
  } else {
    headers['content-type'] = 'application/json';
    response = await fetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        query,
        variables: options.variables,
        operationName: options.operationName,
      }),
    });
  }
  const text = await response.text();
  let body: GraphQLResponse<T>['body'];
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`not JSON (status ${response.status}): ${text.slice(0, 500)}`);
  }
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    headers: response.headers,
    body,
  };
}

/** The data of a request that must succeed (throws with the errors otherwise). */
export async function data<T = Record<string, unknown>>(
  url: string,
  query: string,
  options: Parameters<typeof gql>[2] = {},
): Promise<T> {
  const response = await gql<T>(url, query, options);
  if (response.body.errors !== undefined || response.status !== 200) {
    throw new Error(`GraphQL failed (${response.status}): ${JSON.stringify(response.body.errors)}`);
  }
  return response.body.data as T;
}

/** A graphql-ws client (disposed after the test). */
export function wsClient(wsUrl: string, token?: string): Client {
  const client = createClient({
    url: wsUrl,
    webSocketImpl: WebSocket,
    lazy: false,
    retryAttempts: 0,
    connectionParams: token === undefined ? {} : { authorization: `Bearer ${token}` },
    onNonLazyError: () => undefined,
  });
  clients.add(client);
  return client;
}

export interface Collected<T> {
  readonly items: T[];
  readonly errors: unknown[];
  /** Resolves when the stream completes (or fails). */
  readonly done: Promise<void>;
  /** Unsubscribes. */
  stop(): void;
}

/** Subscribes over WebSocket and collects every `data` payload. */
export function wsSubscribe<T = Record<string, unknown>>(
  client: Client,
  query: string,
  variables: Record<string, unknown> = {},
): Collected<T> {
  const items: T[] = [];
  const errors: unknown[] = [];
  let stop: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    stop = client.subscribe<T>(
      { query, variables },
      {
        next: (value) => {
          if (value.errors) errors.push(...value.errors);
          if (value.data) items.push(value.data as T);
        },
        error: (error) => {
          // graphql-ws reports refused operations as an array of GraphQL errors.
          if (Array.isArray(error)) errors.push(...error);
          else errors.push(error);
          resolve();
        },
        complete: () => resolve(),
      },
    );
  });
  return { items, errors, done, stop: () => stop() };
}

/**
 * Subscribes over SSE (yoga's default: POST with Accept: text/event-stream) and collects every
 * `next` payload until the stream ends or `stop()` aborts the request.
 */
export function sseSubscribe<T = Record<string, unknown>>(
  url: string,
  query: string,
  options: { variables?: Record<string, unknown>; token?: string } = {},
): Collected<T> & { readonly status: Promise<number> } {
  const items: T[] = [];
  const errors: unknown[] = [];
  const controller = new AbortController();
  let setStatus: (status: number) => void = () => undefined;
  const status = new Promise<number>((resolve) => {
    setStatus = resolve;
  });
  const done = (async () => {
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          accept: 'text/event-stream',
          'content-type': 'application/json',
          ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
        },
        body: JSON.stringify({ query, variables: options.variables ?? {} }),
        signal: controller.signal,
      });
      setStatus(response.status);
      if (response.body === null) return;
      const decoder = new TextDecoder();
      const reader = response.body.getReader();
      let buffer = '';
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) return;
        buffer += decoder.decode(chunk.value, { stream: true });
        for (;;) {
          const end = buffer.indexOf('\n\n');
          if (end === -1) break;
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const lines = event.split('\n');
          const type = lines
            .find((line) => line.startsWith('event:'))
            ?.slice(6)
            .trim();
          const dataText = lines
            .filter((line) => line.startsWith('data:'))
            .map((line) => line.slice(5).trim())
            .join('\n');
          if (type === 'complete') return;
          if (dataText === '') continue;
          const payload = JSON.parse(dataText) as { data?: T; errors?: unknown[] };
          if (payload.errors) errors.push(...payload.errors);
          if (payload.data) items.push(payload.data);
        }
      }
    } catch (error) {
      if (!controller.signal.aborted) errors.push(error);
    }
  })();
  return { items, errors, done, status, stop: () => controller.abort() };
}

/** Opens a raw graphql-transport-ws socket, sends connection_init, resolves with the first reply or the close code. */
export function handshake(
  wsUrl: string,
  payload: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  return new Promise<{ ack: boolean; code?: number; reason?: string }>((resolve, reject) => {
    const socket = new WebSocket(wsUrl, 'graphql-transport-ws', { headers });
    socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload })));
    socket.on('message', (message) => {
      if (JSON.parse(message.toString()).type === 'connection_ack') {
        resolve({ ack: true });
        socket.close();
      }
    });
    socket.on('close', (code, reason) => resolve({ ack: false, code, reason: reason.toString() }));
    socket.on('error', reject);
  });
}
