import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';

/** Error answers: `{ error: code, message }` with the status. */
export class HttpError extends Error {
  override readonly name = 'HttpError';
  readonly status: number;
  readonly code: string;
  readonly headers: OutgoingHttpHeaders;

  constructor(status: number, code: string, message: string, headers: OutgoingHttpHeaders = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.headers = headers;
  }

  get body(): { error: string; message: string } {
    return { error: this.code, message: this.message };
  }
}

export const maxBodyBytes = 1_000_000;

/** Reads the whole body as text; 413 beyond `maxBodyBytes`. */
export async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > maxBodyBytes) {
      throw new HttpError(413, 'payload_too_large', `body over ${maxBodyBytes} bytes`);
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Parses a JSON object body; 400 otherwise. An empty body is an empty object. */
export function parseJsonObject(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'invalid_request', 'body is not valid JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new HttpError(400, 'invalid_request', 'body must be a JSON object');
  }
  return value as Record<string, unknown>;
}

/** Writes a JSON answer unless the client has gone. */
export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: OutgoingHttpHeaders = {},
): void {
  if (response.destroyed || response.writableEnded) return;
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  response.end(text);
}

/** A single header value; repeated headers are joined by node with ', '. */
export function headerValue(request: IncomingMessage, name: string): string | null {
  const value = request.headers[name.toLowerCase()];
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}

export function requiredString(body: Record<string, unknown>, field: string): string {
  const value = body[field];
  if (typeof value !== 'string' || value.length === 0) {
    throw new HttpError(400, 'invalid_request', `${field} must be a non-empty string`);
  }
  return value;
}

/** A string, possibly empty. */
export function requiredText(body: Record<string, unknown>, field: string): string {
  const value = body[field];
  if (typeof value !== 'string')
    throw new HttpError(400, 'invalid_request', `${field} must be a string`);
  return value;
}

export function optionalString(body: Record<string, unknown>, field: string): string | null {
  const value = body[field];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') {
    throw new HttpError(400, 'invalid_request', `${field} must be a string`);
  }
  return value;
}

export function requiredVersion(body: Record<string, unknown>, field: string): number {
  const value = body[field];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new HttpError(400, 'invalid_request', `${field} must be a non-negative integer`);
  }
  return value;
}

export function optionalVersion(body: Record<string, unknown>, field: string): number | null {
  return body[field] === undefined || body[field] === null ? null : requiredVersion(body, field);
}

/** An absolute http(s) URL, or null when absent. */
export function optionalUrl(body: Record<string, unknown>, field: string): string | null {
  const value = optionalString(body, field);
  if (value === null) return null;
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
    throw new HttpError(400, 'invalid_request', `${field} must be an absolute http(s) URL`);
  }
  return value;
}
