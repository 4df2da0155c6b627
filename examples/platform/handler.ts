import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { effectEndpoints, matchRoute, type RouteMatch } from './endpoints';
import { HttpError, headerValue, parseJsonObject, readBody, sendJson } from './http';
import type { IdempotencyStore } from './idempotency';
import {
  type Fault,
  type FaultKind,
  ModeSyntaxError,
  type Modes,
  type PlatformConfig,
  parseModeDirectives,
  type RequestMode,
  type RequestPlan,
} from './modes';
import type { ReceiptDispatcher } from './receipts';
import type { PlatformRecords } from './records';
import { type RouteAnswer, routes } from './routes';
import type { RequestLog, RequestRecord } from './stats';

/** Header (and `?mode=` query parameter) that sets a fault for one request. */
export const modeHeader = 'x-platform-mode';

export interface PlatformParts {
  readonly modes: Modes;
  readonly records: PlatformRecords;
  readonly idempotency: IdempotencyStore;
  readonly log: RequestLog;
  readonly receipts: ReceiptDispatcher;
  /** Aborted when the platform closes; delayed answers give up. */
  readonly signal: AbortSignal;
  readonly onRequest: ((record: RequestRecord) => void) | undefined;
}

/**
 * One request, in this order: route → request mode → bearer token → fault before the effect
 * (401, 429, 503, never answer) → body → idempotency (replay or 422) → effect → fault after
 * the effect (never answer, 503, slow) → answer. Every request lands in the log exactly once.
 */
export async function handleRequest(
  parts: PlatformParts,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const receivedAt = Date.now();
  const method = request.method ?? 'GET';
  const url = new URL(request.url ?? '/', 'http://platform.invalid');
  const match = matchRoute(method, url.pathname);
  const idempotencyKey = headerValue(request, 'idempotency-key');
  let fault: FaultKind | null = null;
  let replayed = false;

  const finish = (status: number | 'hung'): void => {
    const record = parts.log.record({
      endpoint: match?.endpoint ?? 'unmatched',
      method,
      path: url.pathname,
      status,
      fault,
      idempotencyKey,
      replayed,
      receivedAt,
      answeredAt: status === 'hung' ? null : Date.now(),
    });
    try {
      parts.onRequest?.(record);
    } catch {
      // A broken observer must not turn an answer into a second one.
    }
  };

  try {
    const text = await readBody(request);
    if (match === null) {
      throw new HttpError(404, 'not_found', `no route for ${method} ${url.pathname}`);
    }
    const requestMode = readRequestMode(request, url);
    refuseWithoutToken(parts.modes.config, headerValue(request, 'authorization'));
    const plan = parts.modes.plan(match.endpoint, requestMode);
    fault = plan.fault.kind;
    refuseBeforeEffect(plan.fault);
    if (fault === 'timeout') return finish('hung');

    // From here on a refusal (400, 404, 422) is an answer like any other: it too comes
    // slowly, or never, when the fault says so.
    const answer = performOrRefuse(parts, match, text, plan, idempotencyKey);
    replayed = answer.replayed;

    if (fault === 'timeout_after_effect') return finish('hung');
    if (fault === 'unavailable_after_effect') throw unavailable(plan.fault);
    if (fault === 'slow') {
      await sleep(plan.fault.delayMs ?? 1000, undefined, { signal: parts.signal });
    }
    sendJson(response, answer.status, answer.body, answer.headers);
    finish(answer.status);
  } catch (error) {
    if (parts.signal.aborted) return;
    if (error instanceof HttpError) {
      sendJson(response, error.status, error.body, error.headers);
      finish(error.status);
      return;
    }
    // The client went away while sending its body: nothing to answer.
    if (request.destroyed && !request.complete) return;
    sendJson(response, 500, { error: 'internal', message: String(error) });
    finish(500);
  }
}

interface Answer extends RouteAnswer {
  readonly headers: OutgoingHttpHeaders;
  readonly replayed: boolean;
}

function performOrRefuse(
  parts: PlatformParts,
  match: RouteMatch,
  text: string,
  plan: RequestPlan,
  idempotencyKey: string | null,
): Answer {
  try {
    const answer = perform(parts, match, parseJsonObject(text), plan, idempotencyKey);
    const headers = answer.replayed ? { 'idempotent-replayed': 'true' } : {};
    return { ...answer, headers };
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    return { status: error.status, body: error.body, headers: error.headers, replayed: false };
  }
}

function perform(
  parts: PlatformParts,
  match: RouteMatch,
  body: Record<string, unknown>,
  plan: RequestPlan,
  idempotencyKey: string | null,
): RouteAnswer & { readonly replayed: boolean } {
  const isEffect = effectEndpoints.has(match.endpoint);
  const key = isEffect && !plan.ignoreIdempotencyKeys ? idempotencyKey : null;
  if (key !== null) {
    const found = parts.idempotency.lookup(match.endpoint, key, body);
    if (found.kind === 'conflict') {
      throw new HttpError(
        422,
        'idempotency_key_reused',
        `Idempotency-Key "${key}" was used with a different request body`,
      );
    }
    if (found.kind === 'replay') return { ...found.response, replayed: true };
  }
  const answer = routes[match.endpoint]({
    body,
    param: match.param,
    plan,
    idempotencyKey: isEffect ? idempotencyKey : null,
    records: parts.records,
    receipts: parts.receipts,
  });
  if (key !== null && answer.status < 300) {
    parts.idempotency.remember(match.endpoint, key, body, answer);
  }
  return { ...answer, replayed: false };
}

function readRequestMode(request: IncomingMessage, url: URL): RequestMode {
  try {
    return {
      ...parseModeDirectives(headerValue(request, modeHeader) ?? ''),
      ...parseModeDirectives(url.searchParams.get('mode') ?? ''),
    };
  } catch (error) {
    if (error instanceof ModeSyntaxError) throw new HttpError(400, 'invalid_mode', error.message);
    throw error;
  }
}

const revokedHeaders = { 'www-authenticate': 'Bearer realm="platform", error="invalid_token"' };

function refuseWithoutToken(config: PlatformConfig, authorization: string | null): void {
  if (config.revokeToken === true) {
    throw new HttpError(401, 'unauthorized', 'the authorization has been revoked', revokedHeaders);
  }
  if (config.token === undefined || config.token === null) return;
  if (authorization === null) {
    throw new HttpError(401, 'unauthorized', 'a bearer token is required', {
      'www-authenticate': 'Bearer realm="platform"',
    });
  }
  if (authorization !== `Bearer ${config.token}`) {
    throw new HttpError(401, 'unauthorized', 'the bearer token is not valid', revokedHeaders);
  }
}

function refuseBeforeEffect(fault: Fault): void {
  switch (fault.kind) {
    case 'unauthorized':
      throw new HttpError(
        401,
        'unauthorized',
        'the authorization has been revoked',
        revokedHeaders,
      );
    case 'rate_limited': {
      const seconds = fault.retryAfterSeconds ?? 1;
      throw new HttpError(429, 'rate_limited', `too many requests; retry after ${seconds} s`, {
        'retry-after': String(seconds),
      });
    }
    case 'unavailable':
      throw unavailable(fault);
    default:
      return;
  }
}

function unavailable(fault: Fault): HttpError {
  const headers =
    fault.retryAfterSeconds === undefined ? {} : { 'retry-after': String(fault.retryAfterSeconds) };
  return new HttpError(503, 'unavailable', 'the platform is temporarily unavailable', headers);
}
