import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { type Platform, type PlatformOptions, startPlatform } from '../../examples/platform/server';

const open = new Set<{ close(): Promise<void> }>();
afterEach(async () => {
  await Promise.all([...open].map((server) => server.close()));
  open.clear();
});

/** A platform closed automatically after the test. */
export async function usePlatform(options: PlatformOptions = {}): Promise<Platform> {
  const platform = await startPlatform(options);
  open.add(platform);
  return platform;
}

export interface CallOptions {
  readonly body?: unknown;
  readonly key?: string;
  readonly mode?: string;
  readonly token?: string;
  readonly signal?: AbortSignal;
}

export interface CallAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Record<string, unknown>;
}

/** One real HTTP request to the platform. */
export async function call(
  platform: Platform,
  method: 'GET' | 'POST',
  path: string,
  options: CallOptions = {},
): Promise<CallAnswer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.key !== undefined) headers['idempotency-key'] = options.key;
  if (options.mode !== undefined) headers['x-platform-mode'] = options.mode;
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  const response = await fetch(`${platform.url}${path}`, {
    method,
    headers,
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>,
  };
}

export const postBody = Object.freeze({
  noteId: 'n1',
  version: 1,
  title: 'Hello',
  html: '<article>hi</article>',
});

export interface ReceivedCall {
  readonly headers: IncomingHttpHeaders;
  readonly body: Record<string, unknown>;
}

export interface Receiver {
  readonly url: string;
  readonly received: ReadonlyArray<ReceivedCall>;
  close(): Promise<void>;
}

/**
 * A local HTTP server standing in for the API that receives receipts. `statusFor(n)` picks
 * the status of the n-th call (1-based); default 200.
 */
export async function useReceiver(statusFor: (n: number) => number = () => 200): Promise<Receiver> {
  const received: ReceivedCall[] = [];
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    received.push({
      headers: request.headers,
      body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
    });
    response.writeHead(statusFor(received.length), { 'content-type': 'application/json' });
    response.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}/receipts`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  open.add(receiver);
  return receiver;
}

/** Settles to 'answered' or the error's name, so a pending request can be inspected later. */
export function settleOf(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'answered',
    (error: unknown) => (error instanceof Error ? error.name : 'failed'),
  );
}
