import { CliError } from './exit-codes';
import {
  connectionError,
  type Endpoint,
  errorFromBody,
  type GraphQLBody,
  open,
} from './graphql-client';

/**
 * A GraphQL subscription over Server-Sent Events (graphql-yoga's `text/event-stream` answer to
 * a POST): no WebSocket library, and the same Authorization header as every request. Calls
 * `onNext` for each payload in order and waits for it (so a slow consumer slows the stream
 * rather than reordering it); resolves when `signal` aborts, rejects with a CliError when the
 * server answers an error or the stream ends on its own.
 */
export async function subscribe<T>(
  endpoint: Endpoint,
  query: string,
  variables: Record<string, unknown>,
  onNext: (data: T) => Promise<void> | void,
  signal: AbortSignal,
): Promise<void> {
  let response: Response;
  try {
    const opened = await open(endpoint, 'text/event-stream', { query, variables }, signal);
    opened.settled();
    response = opened.response;
  } catch (error) {
    if (signal.aborted) return;
    throw error;
  }
  if (response.body === null) throw closed(endpoint);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) throw closed(endpoint);
      buffer += decoder.decode(chunk.value, { stream: true }).replaceAll('\r\n', '\n');
      for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
        const event = parseEvent(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (event.type === 'complete') throw closed(endpoint);
        if (event.data === '') continue; // a keep-alive comment
        const payload = JSON.parse(event.data) as GraphQLBody<T>;
        const first = payload.errors?.[0];
        if (first !== undefined) throw errorFromBody(first, response.status);
        if (payload.data !== undefined && payload.data !== null) await onNext(payload.data);
      }
    }
  } catch (error) {
    if (signal.aborted) return;
    if (error instanceof CliError) throw error;
    throw connectionError(endpoint, error);
  } finally {
    reader.releaseLock();
  }
}

function parseEvent(text: string): { type: string | undefined; data: string } {
  const lines = text.split('\n');
  return {
    type: lines
      .find((line) => line.startsWith('event:'))
      ?.slice(6)
      .trim(),
    data: lines
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trimStart())
      .join('\n'),
  };
}

function closed(endpoint: Endpoint): CliError {
  return new CliError('connection', 'STREAM_CLOSED', `${endpoint.url} closed the stream`);
}
